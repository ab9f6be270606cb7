# The code of benchmarks/bench_executable_overhead.py's R rows: a release computed from the data each time —
# "mean" (a replace-DP mean of the records clipped to [-15, 15]^d) or "kmeans" (k = 3 centres drawn in the box, five
# Lloyd steps on noisy sums and counts: a DP k-means) —, served through dpaudit's protocol for programs
# (docs/executables.md), or, with --own N, timed in its own loop: one request read, N releases computed for the
# seeds 1..N (after a tenth as many untimed), nothing written but the microseconds per release (wall, CPU).
#
#   Rscript benchmarks/executables/overhead.R mean                            (the protocol)
#   Rscript benchmarks/executables/overhead.R mean --own 5000 < request.json  (its own loop)
suppressPackageStartupMessages(library(jsonlite))
LO <- -15
HI <- 15
K <- 3
STEPS <- 5
args <- commandArgs(trailingOnly = TRUE)
kmeans <- args[1] == "kmeans"
own <- if (length(args) >= 3 && args[2] == "--own") as.integer(args[3]) else 0
laplace <- function(m, scale) scale * log(runif(m) / runif(m))

release <- function(X, eps, seed) {
  set.seed(seed %% 2147483647)
  n <- max(nrow(X), 1)
  d <- ncol(X)
  clipped <- pmin(pmax(X, LO), HI)
  if (!kmeans) return(colSums(clipped) / n + laplace(d, d * (HI - LO) / (n * eps)))
  centres <- matrix(runif(K * d, LO, HI), K, d)
  scale <- STEPS * (d * HI + 1) / eps
  for (step in seq_len(STEPS)) {
    distances <- sapply(seq_len(K), function(c) colSums((t(X) - centres[c, ])^2))
    nearest <- max.col(-matrix(distances, ncol = K), ties.method = "first")
    for (c in seq_len(K)) {
      mine <- clipped[nearest == c, , drop = FALSE]
      count <- nrow(mine) + laplace(1, scale)
      total <- colSums(mine) + laplace(d, scale)
      if (count > 1) centres[c, ] <- pmin(pmax(total / count, LO), HI)
    }
  }
  centres
}

input <- file("stdin", "r")
if (own == 0) {
  writeLines(sprintf('{"protocol": "dpaudit/1", "output": "%s", "name": "%s"}',
                     if (kmeans) "centroids" else "vector", if (kmeans) "kmeans" else "mean"))
  flush(stdout())
}
while (length(line <- readLines(input, n = 1)) > 0) {
  req <- fromJSON(line, simplifyVector = FALSE)
  X <- matrix(as.numeric(unlist(req$data)), nrow = req$n, ncol = req$d, byrow = TRUE)
  if (own > 0) {
    for (seed in seq_len(own %/% 10 + 5)) release(X, req$epsilon, seed)  # untimed: R compiles it on first calls
    started <- proc.time()
    for (seed in seq_len(own)) release(X, req$epsilon, seed)
    spent <- proc.time() - started
    cat(sprintf("%.6f %.6f\n", spent[["elapsed"]] * 1e6 / own, (spent[["user.self"]] + spent[["sys.self"]]) * 1e6 / own))
    quit(save = "no")
  }
  releases <- lapply(req$seeds, function(seed) release(X, req$epsilon, seed))
  # one array, a release per row: jsonlite writes it several times faster than a list of releases
  releases <- if (kmeans) aperm(simplify2array(releases), c(3, 1, 2)) else do.call(rbind, releases)
  writeLines(toJSON(list(releases = releases), digits = NA))
  flush(stdout())
}
