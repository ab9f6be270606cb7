# diffpriv's DPMechLaplace on a clipped mean: its bound at the claim, and three mistakes a user's wrapper makes.
#
#   Rscript benchmarks/realcode/reproductions/reproduce_diffpriv_mean.R --case CASE [--fits 4000] [--json PATH] \
#       [--library DIR]
#
# R and diffpriv only (jsonlite writes the JSON).  The plug-ins (diffpriv_plugins.R) release the mean of the records
# clipped to [-1, 1]^2 through DPMechLaplace with sensitivity 2 * (hi - lo) / n, whose noise is .rlap: the
# difference of two exponentials of scale sensitivity / epsilon: epsilon-DP when one record is replaced (n public).
# Claim epsilon = 1, replace neighbours; release i on D after set.seed(i), on D' after set.seed(10^6 + i):
#
# * claim — laplace_mean: D = 10 records at (1, 1), D' = D with one record replaced by (-1, -1); event: both
#   coordinates of the release > 1 (where the two densities' ratio is largest, e^1): the bound stays below 1;
# * ten-epsilon — laplace_mean_at_ten_epsilon (DPParamsEps(10 * epsilon)), the same pair and event;
# * noise-scale — laplace_mean_data_range (the sensitivity from the data's own range): the same pair; event: the
#   release is exactly (1, 1) (no noise on a dataset whose records are all equal);
# * branch — laplace_mean_small_exact (the exact mean below 10 records): D = 9 records at (1, 1), D' = D with one
#   replaced by (-1, -1); event: the release is exactly (1, 1).

local({
  here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)[1]))
  sys.source(file.path(here, "one_pair.R"), envir = globalenv())
})
CLAIM <- 1
BOX <- list(lo = c(-1, -1), hi = c(1, 1))
AT_ONE <- function(m) all(m == c(1, 1))
TAIL <- function(m) all(m > 1)
CASES <- list(
  "claim" = list(fn = "laplace_mean", n = 10, event = "both coordinates > 1", holds = TAIL, favours = "D"),
  "ten-epsilon" = list(fn = "laplace_mean_at_ten_epsilon", n = 10, event = "both coordinates > 1", holds = TAIL,
                       favours = "D", needle = "10 * epsilon"),
  "noise-scale" = list(fn = "laplace_mean_data_range", n = 10, event = "the release is exactly (1, 1)",
                       holds = AT_ONE, favours = "D", needle = "diff(range(x))"),
  "branch" = list(fn = "laplace_mean_small_exact", n = 9, event = "the release is exactly (1, 1)", holds = AT_ONE,
                  favours = "D", needle = "nrow(X) < SMALL"))

main <- function() {
  args <- arguments(fits = 4000, cases = names(CASES))
  case <- CASES[[args$case]]
  plugins <- wrappers()
  plugin <- get(case$fn, envir = plugins)
  found <- if (is.null(case$needle)) {
    core <- getMethod(".responseCore", c("DPMechLaplace", "numeric", "DPParamsEps"), where = asNamespace("diffpriv"))
    source_line(core@.Data, "scale = object@sensitivity", where = "diffpriv R/laplace_mechanism.R")
  } else {
    source_line(plugin, case$needle, where = "benchmarks/realcode/diffpriv_plugins.R")
  }
  D <- matrix(1, nrow = case$n, ncol = 2)
  D_prime <- rbind(D[-1, , drop = FALSE], c(-1, -1))
  counts <- count(function(X) plugin(X, CLAIM, BOX), D, D_prime, case$holds, args$fits)
  report(args$json, library = paste("diffpriv DPMechLaplace via", case$fn), relation = "replace",
         D = sprintf("%d records at (1, 1)", case$n), D_prime = "D with one record replaced by (-1, -1)",
         event = case$event, favours = case$favours, fits = args$fits, counts = counts, delta = 0, claim = CLAIM,
         found = found, case = args$case)
}

main()
