# diffpriv's DPMechExponential: its probabilities are the quality scores themselves, with no exp.
#
#   Rscript benchmarks/realcode/reproductions/reproduce_diffpriv_exponential.R [--fits 20000] [--json PATH] \
#       [--library DIR] [--patched]
#
# R and diffpriv only (jsonlite writes the JSON).  releaseResponse for DPMechExponential computes
# `pmf <- qualities * (epsilon / (2 * sensitivity)); pmf <- pmf / sum(pmf)`: the probability of a response is
# proportional to its quality, not to exp(epsilon * quality / (2 * sensitivity)), so a response whose quality is 0
# on D and positive on a neighbour D' has probability 0 against > 0: epsilon = infinity, whatever epsilon is asked.
# The audited plug-in (diffpriv_plugins.R's exponential_centre) picks one centre of a public 3 x 3 grid of the box
# [-1, 1]^2, quality = the records within (hi - lo) / 4 of the candidate in every coordinate, sensitivity 1 under
# add/remove, claim epsilon = 1.  D = 10 records at (1, 1); D' = D plus (-1, -1), next to the empty candidate
# (-1, -1); event: the centre released is (-1, -1).  Release i on D after set.seed(i), on D' after
# set.seed(10^6 + i).  --patched: the same with the library's method patched to exp(epsilon * quality / (2 *
# sensitivity)), shifted by its largest value (the control: the violation is gone).

local({
  here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)[1]))
  sys.source(file.path(here, "one_pair.R"), envir = globalenv())
})
CLAIM <- 1
BOX <- list(lo = c(-1, -1), hi = c(1, 1))

OLD <- "pmf <- qualities * (getEpsilon(privacyParams)/(2 * mechanism@sensitivity))"
NEW <- "pmf <- exp((qualities - max(qualities)) * (getEpsilon(privacyParams)/(2 * mechanism@sensitivity)))"

patch_exponential <- function(method) {
  # the library's own releaseResponse for DPMechExponential with its pmf line replaced (the finding's patch),
  # evaluated in diffpriv's namespace as the original is
  src <- deparse(method@.Data)
  if (sum(grepl(OLD, src, fixed = TRUE)) != 1) stop("the pmf line is not in this diffpriv's releaseResponse")
  patched <- eval(parse(text = sub(OLD, NEW, src, fixed = TRUE)))
  environment(patched) <- asNamespace("diffpriv")
  setMethod("releaseResponse", c("DPMechExponential", "DPParamsEps", "ANY"), patched, where = globalenv())
}

main <- function() {
  args <- arguments(fits = 20000)
  plugins <- wrappers()
  method <- getMethod("releaseResponse", c("DPMechExponential", "DPParamsEps", "ANY"))
  found <- source_line(method@.Data, "pmf <- qualities", where = "diffpriv R/exponential_mechanism.R")
  if (args$patched) {
    patch_exponential(method)
    found <- list(line = paste(found$line, "(patched)"), text = NEW)
  }
  D <- matrix(1, nrow = 10, ncol = 2)
  D_prime <- rbind(D, c(-1, -1))
  counts <- count(function(X) plugins$exponential_centre(X, CLAIM, BOX), D, D_prime,
                  function(centre) all(centre == c(-1, -1)), args$fits)
  name <- paste0("diffpriv DPMechExponential via exponential_centre", if (args$patched) " (patched)" else "")
  report(args$json, library = name,
         relation = "add-remove", D = "10 records at (1, 1)", D_prime = "D plus (-1, -1)",
         event = "the centre released is (-1, -1), empty on D", favours = "D'", fits = args$fits, counts = counts,
         delta = 0, claim = CLAIM, found = found, patched = args$patched)
}

main()
