# A differentially private mean of records in the public box [-15, 15]^d (blobs-2d's), audited through dpaudit's
# protocol for programs (docs/executables.md): JSON lines on stdin and stdout.  Each coordinate of the mean of the
# clipped records gets Laplace noise of scale d (HI - LO) / (n epsilon): the L1 sensitivity of the mean when one
# record is replaced, so it is epsilon-DP under --neighbours replace.  With --broken the scale is 10 times too small.
#
#   dpaudit estimate-eps -m "cmd:Rscript examples/executables/dp_mean.R" --eps 1 --neighbours replace
#   dpaudit estimate-eps -m "cmd:Rscript examples/executables/dp_mean.R --broken" --eps 1 --neighbours replace
# Needs R's jsonlite (Debian: apt-get install r-base-core r-cran-jsonlite).
suppressPackageStartupMessages(library(jsonlite))
LO <- -15
HI <- 15
broken <- "--broken" %in% commandArgs(trailingOnly = TRUE)

release <- function(req) {
  X <- pmin(pmax(matrix(as.numeric(unlist(req$data)), nrow = req$n, ncol = req$d, byrow = TRUE), LO), HI)
  records <- max(req$n, 1)
  mu <- colSums(X) / records
  scale <- req$d * (HI - LO) / (records * req$epsilon) / (if (broken) 10 else 1)
  one <- function(seed) {
    set.seed(seed %% 2147483647)  # R's seeds are 32-bit integers
    mu + scale * log(runif(req$d) / runif(req$d))
  }  # the releases as one matrix, a row each: jsonlite writes a matrix 30 times faster than a list
  matrix(vapply(req$seeds, one, numeric(req$d)), ncol = req$d, byrow = TRUE)
}

input <- file("stdin", "r")
writeLines(sprintf('{"protocol": "dpaudit/1", "output": "vector", "name": "%s"}',
                   if (broken) "dp_mean_broken" else "dp_mean"))
flush(stdout())
while (length(line <- readLines(input, n = 1)) > 0) {
  req <- fromJSON(line, simplifyVector = FALSE)
  reply <- tryCatch(list(releases = release(req)), error = function(e) list(error = conditionMessage(e)))
  writeLines(toJSON(reply, digits = NA, auto_unbox = TRUE))
  flush(stdout())
}
