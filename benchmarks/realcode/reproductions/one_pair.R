# What the R reproductions share (one_pair.py's twin, in R alone): the command line, fits on one pair, a
# Clopper-Pearson bound on epsilon from two counts (qbeta), the benchmark's wrapper functions, the line of the
# library a result comes from, and the JSON the benchmark reads (the same keys as one_pair.py writes; jsonlite,
# which the plug-ins' protocol needs anyway, writes it).
# epsilon >= ln((p_lo - delta) / q_hi), p_lo the lower limit of the favoured dataset's rate in the event and q_hi
# the upper limit of the other's, each at alpha / 2 = 2.5 % (95 % together).

arguments <- function(fits, cases = character(0)) {
  args <- commandArgs(trailingOnly = TRUE)
  value <- function(flag, default = NULL) {
    at <- match(flag, args)
    if (is.na(at) || at == length(args)) default else args[[at + 1]]
  }
  out <- list(case = value("--case"), fits = as.integer(value("--fits", fits)), json = value("--json"),
              library = value("--library"), patched = "--patched" %in% args)
  if (length(cases) && !isTRUE(out$case %in% cases)) {
    message("usage: Rscript ", script_name(), " --case {", paste(cases, collapse = ","), "} [--fits N] [--json PATH] ",
            "[--library DIR]")
    quit(status = 2)
  }
  if (!is.null(out$library)) .libPaths(c(out$library, .libPaths()))
  if (!suppressPackageStartupMessages(require("diffpriv", quietly = TRUE, character.only = TRUE))) {
    message("cannot load diffpriv from ", paste(.libPaths(), collapse = ", "), ": give --library DIR")
    quit(status = 2)
  }
  out
}

script_name <- function() {
  sub("^--file=", "", grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)[1])
}

wrappers <- function() {
  # the benchmark's R plug-ins (diffpriv only), so that a reproduction runs the code exactly as the audited
  # program calls it; sourcing the file runs no protocol
  path <- file.path(dirname(script_name()), "..", "diffpriv_plugins.R")
  env <- new.env()
  sys.source(path, envir = env, keep.source = TRUE)
  env
}

epsilon_bound <- function(k_favoured, k_other, n, delta = 0, alpha = 0.05) {
  p_lo <- if (k_favoured == 0) 0 else qbeta(alpha / 2, k_favoured, n - k_favoured + 1)
  q_hi <- if (k_other == n) 1 else qbeta(1 - alpha / 2, k_other + 1, n - k_other)
  eps <- if (p_lo > delta) log((p_lo - delta) / q_hi) else 0
  list(epsilon = max(eps, 0), p_lo = p_lo, q_hi = q_hi)
}

count <- function(release_on, D, D_prime, event, fits) {
  # how often event holds over fits releases on each dataset: release i on D after set.seed(i), on D' after
  # set.seed(10^6 + i); release_on(X) builds the plug-in's release function for X, as one request does
  t0 <- proc.time()[["elapsed"]]
  on <- function(X, offset) {
    draw <- release_on(X)
    sum(vapply(seq_len(fits) - 1, function(i) {
      set.seed(offset + i)
      isTRUE(event(draw()))
    }, logical(1)))
  }
  list(in_D = on(D, 0), in_D_prime = on(D_prime, 10^6), seconds = proc.time()[["elapsed"]] - t0)
}

source_line <- function(f, needle, where = NULL) {
  # (file:line, the line) of the first line of f's source containing needle: from its source references (the
  # benchmark installs diffpriv with --with-keep.source), else from its deparsed body
  refs <- attr(body(f), "srcref")
  file <- if (is.null(where)) utils::getSrcFilename(f) else where
  for (ref in refs) {
    text <- as.character(ref)
    hit <- grep(needle, text, fixed = TRUE)
    if (length(hit)) {
      return(list(line = sprintf("%s:%d", file, ref[[1]] + hit[[1]] - 1), text = trimws(text[[hit[[1]]]])))
    }
  }
  text <- grep(needle, deparse(f), fixed = TRUE, value = TRUE)
  if (length(text)) return(list(line = paste(file, "(no source references)"), text = trimws(text[[1]])))
  list(line = "not found", text = sprintf("(no line with '%s': another version?)", needle))
}

report <- function(path, library, relation, D, D_prime, event, favours, fits, counts, delta, claim, found, ...) {
  in_D <- counts$in_D
  in_D_prime <- counts$in_D_prime
  k <- if (favours == "D'") c(in_D_prime, in_D) else c(in_D, in_D_prime)
  b <- epsilon_bound(k[[1]], k[[2]], fits, delta)
  big <- function(x) format(x, big.mark = ",", scientific = FALSE)
  cat(sprintf("%s: D = %s; D' = %s (%s)\n", library, D, D_prime, relation))
  cat(sprintf("event: %s: D %s/%s fits, D' %s/%s fits (%.0f s)\n", event, big(in_D), big(fits), big(in_D_prime),
              big(fits), counts$seconds))
  cat(sprintf("p_lo = %.4f, q_hi = %.6f: epsilon >= ln((p_lo - delta)/q_hi) = %.2f at 95 %% (claim: %g, delta %g)\n",
              b$p_lo, b$q_hi, b$epsilon, claim, delta))
  cat(sprintf("the line: %s: %s\n", found$line, found$text))
  if (!is.null(path)) {
    jsonlite::write_json(list(library = library, relation = relation, D = D, D_prime = D_prime, event = event,
                              favours = favours, fits = fits, in_event_D = in_D, in_event_D_prime = in_D_prime,
                              epsilon_lower_bound = b$epsilon, p_lo = b$p_lo, q_hi = b$q_hi, delta = delta,
                              claim = claim, line = found$line, line_text = found$text, seconds = counts$seconds,
                              r = R.version.string, diffpriv = as.character(utils::packageVersion("diffpriv")), ...),
                         path, auto_unbox = TRUE, digits = NA, pretty = TRUE)
  }
  invisible(b$epsilon)
}
