#!/usr/bin/env Rscript
# The truth internal/stats is tested against: R's own tests (stats package) on R's built-in
# datasets, inputs and outputs written to internal/stats/testdata/r-truth.json.
# Run by `make stats-truth` (needs Debian's r-base-core); `make test` reads the committed file.
# No package beyond base R: the JSON is written by hand (jsonlite is not installed here).

out <- if (length(commandArgs(TRUE))) commandArgs(TRUE)[1] else "internal/stats/testdata/r-truth.json"

num <- function(v) {
  if (is.na(v)) stop("NA in truth")
  if (is.infinite(v)) return(if (v > 0) '"Inf"' else '"-Inf"')
  sprintf("%.17g", v)
}
vec <- function(v) paste0("[", paste(vapply(v, num, ""), collapse = ","), "]")
tab <- function(m) paste0("[", paste(apply(m, 1, vec), collapse = ","), "]")
str <- function(s) paste0('"', gsub('"', '\\\\"', s), '"')
obj <- function(...) {
  kv <- list(...)
  kv <- kv[!vapply(kv, is.null, TRUE)]
  paste0("{", paste(paste0(str(names(kv)), ":", unlist(kv)), collapse = ","), "}")
}

cases <- character()
add <- function(name, test, h, x = NULL, y = NULL, table = NULL, method = NULL, extra = NULL) {
  want <- list(
    statistic = if (!is.null(h$statistic)) num(unname(h$statistic)) else NULL,
    p = num(h$p.value),
    df = if (!is.null(h$parameter)) num(unname(h$parameter)) else NULL,
    estimate = if (!is.null(h$estimate)) vec(unname(h$estimate)) else NULL,
    ci = if (!is.null(h$conf.int)) vec(as.numeric(h$conf.int)) else NULL,
    conf_level = if (!is.null(attr(h$conf.int, "conf.level"))) num(attr(h$conf.int, "conf.level")) else NULL,
    method = str(h$method))
  if (!is.null(extra)) want <- c(want, extra)
  cases <<- c(cases, obj(name = str(name), test = str(test),
    method = if (!is.null(method)) str(method) else NULL,
    x = if (!is.null(x)) vec(x) else NULL, y = if (!is.null(y)) vec(y) else NULL,
    table = if (!is.null(table)) tab(table) else NULL,
    want = do.call(obj, want)))
}

# Two groups from R's datasets.
groups <- list(
  sleep = split(sleep$extra, sleep$group),
  ToothGrowth = split(ToothGrowth$len, ToothGrowth$supp),
  mtcars_mpg_am = split(mtcars$mpg, mtcars$am),
  iris_setosa_versicolor = list(iris$Sepal.Length[iris$Species == "setosa"],
                                iris$Sepal.Length[iris$Species == "versicolor"]),
  airquality_ozone_may_aug = list(na.omit(airquality$Ozone[airquality$Month == 5]),
                                  na.omit(airquality$Ozone[airquality$Month == 8])),
  warpbreaks_wool = split(warpbreaks$breaks, warpbreaks$wool),
  # Without ties and under 50 a group: R's default is the exact Wilcoxon test.
  faithful_first_20_vs_next_15 = list(faithful$eruptions[1:20], faithful$eruptions[21:35]),
  precip_12_vs_10 = list(precip[1:12], precip[13:22]),
  rivers_9_vs_7 = list(rivers[1:9] + 0.5, rivers[10:16]),
  LakeHuron_10_vs_15 = list(as.numeric(LakeHuron[1:10]), as.numeric(LakeHuron[11:25])),
  # Groups too small for a 95% exact CI: R says what the interval covers.
  sleep_2_vs_3 = list(c(0.7, -1.6), c(1.9, 1.1, 4.4)),
  sleep_3_vs_3 = list(c(0.7, -1.6, -0.2), c(1.9, 1.1, 4.4)),
  sleep_4_vs_4 = list(c(0.7, -1.6, -0.2, -1.2), c(1.9, 1.1, 4.4, 5.5))
)
for (g in names(groups)) {
  x <- as.numeric(groups[[g]][[1]]); y <- as.numeric(groups[[g]][[2]])
  add(paste0("welch/", g), "welch-t", t.test(x, y, var.equal = FALSE), x, y)
  add(paste0("wilcox-normal/", g), "mann-whitney",
      suppressWarnings(wilcox.test(x, y, exact = FALSE, correct = TRUE, conf.int = TRUE)), x, y, method = "normal")
  add(paste0("wilcox-default/", g), "mann-whitney",
      suppressWarnings(wilcox.test(x, y, conf.int = TRUE)), x, y, method = "auto")
}

# 2 x 2 tables for Fisher's exact test (and the chi-square test with Yates).
twobytwo <- list(
  UCBAdmissions_admit_gender = margin.table(UCBAdmissions, c(1, 2)),
  UCBAdmissions_dept_A = UCBAdmissions[, , "A"],
  UCBAdmissions_dept_F = UCBAdmissions[, , "F"],
  Titanic_sex_survived = margin.table(Titanic, c(2, 4)),
  Titanic_child_survived = margin.table(Titanic, c(3, 4)),
  esoph_alcohol_low_high = rbind(
    with(esoph[esoph$alcgp == "0-39g/day", ], c(sum(ncases), sum(ncontrols))),
    with(esoph[esoph$alcgp == "120+", ], c(sum(ncases), sum(ncontrols)))),
  mtcars_am_vs = table(mtcars$am, mtcars$vs),
  # Fisher's tea tasting (?fisher.test) and tables with a zero cell, in each corner.
  tea_tasting = matrix(c(3, 1, 1, 3), 2),
  zero_top_left = matrix(c(0, 7, 5, 3), 2),
  zero_bottom_right = matrix(c(6, 2, 4, 0), 2),
  zero_off_diagonal = matrix(c(9, 0, 3, 8), 2),
  # Equal row totals: a table as probable as the one observed differs from it in the last
  # bits, and only R's relative tolerance of 1e-7 counts it in the two-sided p.
  equal_rows_0_8_3_5 = rbind(c(0, 8), c(3, 5)),
  equal_rows_0_9_2_7 = rbind(c(0, 9), c(2, 7))
)
for (t in names(twobytwo)) {
  m <- matrix(as.numeric(twobytwo[[t]]), 2)
  add(paste0("fisher/", t), "fisher", fisher.test(m), table = m)
  add(paste0("chisq/", t), "chi-square", suppressWarnings(chisq.test(m)), table = m)
}

# r x c tables for the chi-square test (no Yates: R applies it to 2 x 2 only).
rbyc <- list(
  UCBAdmissions_admit_dept = margin.table(UCBAdmissions, c(1, 3)),
  HairEyeColor_hair_eye = margin.table(HairEyeColor, c(1, 2)),
  Titanic_class_survived = margin.table(Titanic, c(1, 4)),
  mtcars_cyl_gear = table(mtcars$cyl, mtcars$gear),
  esoph_age_cases = t(sapply(split(esoph, esoph$agegp), function(d) c(sum(d$ncases), sum(d$ncontrols))))
)
for (t in names(rbyc)) {
  m <- unclass(as.matrix(rbyc[[t]])); m <- matrix(as.numeric(m), nrow(m))
  h <- suppressWarnings(chisq.test(m))
  raw <- suppressWarnings(chisq.test(m, correct = FALSE))$statistic
  v <- sqrt(raw / (sum(m) * (min(dim(m)) - 1)))
  add(paste0("chisq/", t), "chi-square", h, table = m, extra = list(cramers_v = num(unname(v))))
}

# Paired columns for correlation and regression.
pairs <- list(
  mtcars_wt_mpg = list(mtcars$wt, mtcars$mpg),
  mtcars_hp_qsec = list(mtcars$hp, mtcars$qsec),
  iris_sepal_petal_length = list(iris$Sepal.Length, iris$Petal.Length),
  airquality_temp_ozone = with(na.omit(airquality[, c("Ozone", "Temp")]), list(Temp, Ozone)),
  cars_speed_dist = list(cars$speed, cars$dist),
  women_height_weight = list(women$height, women$weight),
  faithful_eruptions_waiting = list(faithful$eruptions, faithful$waiting),
  trees_girth_volume_first_4 = list(trees$Girth[1:4], trees$Volume[1:4]),
  trees_girth_volume_first_3 = list(trees$Girth[1:3], trees$Volume[1:3])
)
for (p in names(pairs)) {
  x <- as.numeric(pairs[[p]][[1]]); y <- as.numeric(pairs[[p]][[2]])
  add(paste0("pearson/", p), "pearson", cor.test(x, y, method = "pearson"), x, y)
  add(paste0("spearman/", p), "spearman",
      suppressWarnings(cor.test(x, y, method = "spearman", exact = FALSE)), x, y, method = "t")
  fit <- lm(y ~ x); s <- summary(fit)$coefficients
  h <- list(statistic = s["x", "t value"], p.value = s["x", "Pr(>|t|)"], parameter = fit$df.residual,
            estimate = s["x", "Estimate"], conf.int = confint(fit)["x", ], method = "lm")
  add(paste0("regression/", p), "linear-regression", h, x, y,
      extra = list(r_squared = num(summary(fit)$r.squared)))
}

# Benjamini-Hochberg: a fixed vector with ties and the p-values of every Welch test above.
bh <- character()
addbh <- function(name, p) bh <<- c(bh, obj(name = str(name), p = vec(p), want = vec(p.adjust(p, method = "BH"))))
addbh("fixed_with_ties", c(0.01, 0.02, 0.03, 0.04, 0.05, 0.5, 0.001, 0.04, 0.04, 1, 0))
addbh("welch_p", sapply(groups, function(g) t.test(g[[1]], g[[2]])$p.value))
addbh("tiny", c(1e-300, 1e-20, 0.3, 0.9, 1e-10))

writeLines(paste0('{"r_version":', str(R.version.string), ',\n"cases":[\n',
  paste(cases, collapse = ",\n"), '],\n"bh":[\n', paste(bh, collapse = ",\n"), ']}'), out)
cat("wrote", length(cases), "cases and", length(bh), "BH vectors to", out, "\n")
