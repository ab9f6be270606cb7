# The R package diffpriv (brubinstein/diffpriv, "Easy Differential Privacy"), used through its documented API as
# an R user uses it, and audited through dpaudit's protocol for programs (docs/executables.md: JSON lines on stdin
# and stdout, one seed per release).  The first argument names the function, as file.py:fn names a Python one:
#
#   Rscript benchmarks/realcode/diffpriv_plugins.R FUNCTION [--library DIR] [--start-log FILE]
#
#   laplace_mean                 DPMechLaplace on the mean of the records clipped to the public box,
#                                sensitivity sum(hi - lo) / n: epsilon-DP when one record is replaced (n public)
#   laplace_mean_at_ten_epsilon  the same, released with DPParamsEps(10 * epsilon) while epsilon is claimed
#   laplace_mean_data_range      the same, its sensitivity from the data's own range instead of the box's
#   laplace_mean_small_exact     the same, but the exact mean of fewer than 10 records
#   exponential_centre           DPMechExponential picking one centre of a public 3 x 3 grid of the box, quality =
#                                the records in the candidate's cell, sensitivity 1 (add/remove): a centroids release
#
# The public box is [-1, 1]^d (the box the rows' --bounds states for dpaudit's search), or the request's params'
# bounds where given ([LO, HI] or [[LO1, ...], [HI1, ...]]: --param bounds=…, or the Python API's bounds=).
# --library DIR puts an R library folder first on .libPaths() (the benchmark's diffpriv is installed there, from a
# checkout; dpaudit's workers start programs with a scrubbed environment, so R_LIBS would not reach them).
# --start-log FILE appends "pid time seconds" when the program is ready (its handshake): the time of day and how
# long R took to start and load diffpriv and jsonlite.
# Every release i is drawn after set.seed(S_i), S_i the seed dpaudit sends for it.  Sourcing this file (the
# reproductions do) defines the functions and runs nothing.

BOX <- list(-1, 1)  # the public box, as the corpus's Python wrappers fix it, unless the request's params name one
SMALL <- 10  # laplace_mean_small_exact: "too few records to bother with noise"

box_of <- function(params, d) {
  b <- if (is.null(params$bounds)) BOX else params$bounds
  if (length(b) != 2) stop("bounds must be [LO, HI] or [[LO1, ...], [HI1, ...]]")
  list(lo = rep_len(as.numeric(unlist(b[[1]])), d), hi = rep_len(as.numeric(unlist(b[[2]])), d))
}

clip_to <- function(X, box) {
  pmin(pmax(X, rep(box$lo, each = nrow(X))), rep(box$hi, each = nrow(X)))
}

# Each function builds diffpriv's mechanism for one dataset and epsilon, and returns a function of no arguments
# that draws one release from R's random generator (a request's releases share the mechanism, as a user's loop
# over releases would).
laplace_mean <- function(X, epsilon, box, budget = epsilon) {
  Xc <- clip_to(X, box)
  n <- max(nrow(Xc), 1)
  mechanism <- DPMechLaplace(target = function(D) colSums(D) / n, sensitivity = sum(box$hi - box$lo) / n,
                             dims = ncol(Xc))
  privacy <- DPParamsEps(epsilon = budget)
  function() releaseResponse(mechanism, privacy, Xc)$response
}

laplace_mean_at_ten_epsilon <- function(X, epsilon, box) {
  laplace_mean(X, epsilon, box, budget = 10 * epsilon)
}

laplace_mean_data_range <- function(X, epsilon, box) {
  Xc <- clip_to(X, box)
  n <- max(nrow(Xc), 1)
  spread <- sum(apply(Xc, 2, function(x) diff(range(x))))  # the data's own range, not the box's
  mechanism <- DPMechLaplace(target = function(D) colSums(D) / n, sensitivity = spread / n, dims = ncol(Xc))
  privacy <- DPParamsEps(epsilon = epsilon)
  function() releaseResponse(mechanism, privacy, Xc)$response
}

laplace_mean_small_exact <- function(X, epsilon, box) {
  if (nrow(X) < SMALL) {
    exact <- colSums(clip_to(X, box)) / max(nrow(X), 1)
    return(function() exact)
  }
  laplace_mean(X, epsilon, box)
}

grid_of <- function(box) {
  axes <- lapply(seq_along(box$lo), function(j) c(box$lo[j], (box$lo[j] + box$hi[j]) / 2, box$hi[j]))
  points <- as.matrix(expand.grid(axes))
  lapply(seq_len(nrow(points)), function(i) unname(points[i, ]))
}

exponential_centre <- function(X, epsilon, box) {
  Xc <- clip_to(X, box)
  half <- (box$hi - box$lo) / 4  # a candidate's cell: within (hi - lo) / 4 of it in every coordinate
  records_near <- function(D) {
    function(centre) sum(rowSums(abs(D - rep(centre, each = nrow(D))) <= rep(half, each = nrow(D))) == ncol(D))
  }
  mechanism <- DPMechExponential(target = records_near, sensitivity = 1, responseSet = grid_of(box))
  privacy <- DPParamsEps(epsilon = epsilon)
  function() matrix(releaseResponse(mechanism, privacy, Xc)$response, nrow = 1)
}

PLUGINS <- list(laplace_mean = "vector", laplace_mean_at_ten_epsilon = "vector", laplace_mean_data_range = "vector",
                laplace_mean_small_exact = "vector", exponential_centre = "centroids")

# ---- the protocol (dpaudit/1) ---------------------------------------------------------------------------------------
reply_to <- function(req, plugin, output) {
  X <- matrix(as.numeric(unlist(req$data)), nrow = req$n, ncol = req$d, byrow = TRUE)
  draw <- plugin(X, req$epsilon, box_of(req$params, req$d))
  releases <- lapply(req$seeds, function(seed) {
    set.seed(seed %% 2147483647)  # R's seeds are 32-bit integers
    tryCatch(draw(), error = function(e) list(error = conditionMessage(e)))
  })
  if (any(vapply(releases, is.list, logical(1)))) return(list(releases = releases))  # some failed: a list
  # all drawn: one matrix (vector) or a count x 1 x d array (centroids), which jsonlite writes 30 times faster
  stacked <- matrix(unlist(releases), nrow = length(releases), byrow = TRUE)
  list(releases = if (output == "centroids") array(stacked, c(nrow(stacked), 1, ncol(stacked))) else stacked)
}

option_value <- function(args, flag) {
  at <- match(flag, args)
  if (is.na(at) || at == length(args)) NULL else args[[at + 1]]
}

main <- function(args) {
  name <- if (length(args)) args[[1]] else ""
  if (!name %in% names(PLUGINS)) {
    message("usage: Rscript diffpriv_plugins.R FUNCTION [--library DIR]; FUNCTION is one of ",
            paste(names(PLUGINS), collapse = ", "))
    quit(status = 2)
  }
  library_dir <- option_value(args, "--library")
  if (!is.null(library_dir)) .libPaths(c(library_dir, .libPaths()))
  loaded <- suppressPackageStartupMessages(c(requireNamespace("jsonlite", quietly = TRUE),
                                             require("diffpriv", quietly = TRUE, character.only = TRUE)))
  if (!all(loaded)) {
    message("cannot load ", paste(c("jsonlite", "diffpriv")[!loaded], collapse = " and "), " from ",
            paste(.libPaths(), collapse = ", "), " (jsonlite: apt-get install r-cran-jsonlite; diffpriv: ",
            "R CMD INSTALL --library=DIR a checkout of brubinstein/diffpriv, then --library DIR)")
    quit(status = 2)
  }
  log_file <- option_value(args, "--start-log")
  if (!is.null(log_file)) cat(sprintf("%d %.3f %.3f\n", Sys.getpid(), as.numeric(Sys.time()), proc.time()[["elapsed"]]),
                              file = log_file, append = TRUE)
  plugin <- get(name)
  output <- PLUGINS[[name]]
  input <- file("stdin", "r")
  writeLines(sprintf('{"protocol": "dpaudit/1", "output": "%s", "name": "diffpriv %s"}', output, name))
  flush(stdout())
  while (length(line <- readLines(input, n = 1)) > 0) {
    req <- jsonlite::fromJSON(line, simplifyVector = FALSE)
    reply <- tryCatch(reply_to(req, plugin, output), error = function(e) list(error = conditionMessage(e)))
    writeLines(jsonlite::toJSON(reply, digits = NA, auto_unbox = TRUE))
    flush(stdout())
  }
}

if (sys.nframe() == 0L) main(commandArgs(trailingOnly = TRUE))
