package stats

// Description says what a test on the menu reads and reports, in the words an analyst (the
// model that writes an analysis) and a reader of its record need. The analyst's prompt lists
// these, so the menu it chooses from is the one Run accepts.
type Description struct {
	Name   string `json:"name"`
	Reads  string `json:"reads"`
	Effect string `json:"effect"`
	When   string `json:"when"`
}

// Describe lists the menu in Menu's order.
func Describe() []Description {
	return []Description{
		{WelchT, "two numeric groups (x, y), at least 2 values each",
			"difference in means x̄ - ȳ with its Welch 95% CI; Hedges' g",
			"compare the means of two independent groups without assuming equal variances"},
		{MannWhitney, "two numeric groups (x, y), at least 2 values each",
			"Hodges-Lehmann shift (median of x - y over all pairs) with its 95% CI; rank-biserial r",
			"compare two independent groups by ranks: skewed data, outliers, ordinal scores"},
		{Fisher, "a 2 x 2 table of counts",
			"conditional maximum-likelihood odds ratio with its exact 95% CI",
			"association in a 2 x 2 table, especially with small counts"},
		{ChiSquare, "an r x c table of counts (Yates' correction on 2 x 2)",
			"Cramér's V (no CI)",
			"association between two categorical variables with enough counts (expected 5 or more)"},
		{Pearson, "two numeric columns of pairs (x, y), at least 3 pairs",
			"r with its Fisher-z 95% CI (4 pairs or more)",
			"linear association between two numeric variables"},
		{Spearman, "two numeric columns of pairs (x, y), at least 3 pairs",
			"rho with an approximate Fisher-z 95% CI",
			"monotone association, or ranks, or outliers"},
		{LinearRegression, "predictor x and response y, at least 3 pairs",
			"slope with its 95% CI; R²",
			"how much y changes per unit of x"},
	}
}
