package citation

import "strings"

// PubMed's XML: efetch's articles and Bookshelf chapters, and esummary's document
// summaries.

// pubmedArticle reads one PubmedArticle of efetch: the article's own ids (not those of
// its reference list).
func pubmedArticle(a *xnode) (Record, bool) {
	var r Record
	m, art, data := a.kid("MedlineCitation"), a.kid("MedlineCitation", "Article"), "PubmedData"
	book := a.local() == "PubmedBookArticle" // a chapter of NCBI's Bookshelf (GeneReviews, StatPearls)
	if book {
		m, data = a.kid("BookDocument"), "PubmedBookData"
		art = m
	}
	if id, ok := parseAs(SchemePMID, m.kid("PMID").text()); ok {
		r.addID(id)
		r.Details.ID = id.Value
	}
	for _, x := range a.kids(data) {
		for _, ai := range x.kid("ArticleIdList").kids("ArticleId") {
			xmlArticleID(&r, ai.attr("IdType"), ai.text())
		}
	}
	for _, loc := range art.kids("ELocationID") {
		xmlArticleID(&r, loc.attr("EIdType"), loc.text())
	}
	if len(r.IDs) == 0 {
		return r, false
	}
	d := &r.Details
	d.Title = oneLine(art.kid("ArticleTitle").text())
	j := art.kid("Journal")
	d.Venue = oneLine(j.kid("Title").text())
	pd := j.kid("JournalIssue", "PubDate")
	authors := art.kid("AuthorList")
	if book {
		b := m.kid("Book")
		if d.Venue = oneLine(b.kid("BookTitle").text()); d.Title == "" {
			d.Title = d.Venue
		}
		pd = b.kid("PubDate")
		for _, l := range m.kids("AuthorList") {
			if l.attr("Type") != "editors" {
				authors = l
				break
			}
		}
	}
	if d.Year = yearOf(pd.kid("Year").text()); d.Year == 0 {
		d.Year = yearOf(pd.kid("MedlineDate").text())
	}
	for _, au := range authors.kids("Author") {
		if len(d.Authors) >= maxAuthors {
			break
		}
		family, given := oneLine(au.kid("LastName").text()), oneLine(au.kid("ForeName").text())
		if given == "" {
			given = oneLine(au.kid("Initials").text())
		}
		switch {
		case family != "" && given != "":
			d.Authors = append(d.Authors, family+", "+given)
		case family != "":
			d.Authors = append(d.Authors, family)
		default:
			if c := oneLine(au.kid("CollectiveName").text()); c != "" {
				d.Authors = append(d.Authors, c)
			}
		}
	}
	parts := []string{d.Title}
	for _, t := range art.kid("Abstract").kids("AbstractText") {
		text := oneLine(t.text())
		if label := t.attr("Label"); label != "" {
			text = label + ": " + text
		}
		parts = append(parts, text)
	}
	r.Text = strings.Join(parts, "\n")
	return r, true
}

func xmlArticleID(r *Record, kind, value string) {
	var scheme string
	switch strings.ToLower(kind) {
	case "pubmed":
		scheme = SchemePMID
	case "doi":
		scheme = SchemeDOI
	case "pmc", "pmcid":
		scheme = SchemePMCID
	case "arxiv":
		scheme = SchemeArXiv
	default:
		return
	}
	if id, ok := parseAs(scheme, oneLine(value)); ok {
		r.addID(id)
	}
}

// esummaryXML reads one DocumentSummary of esummary (version 2.0).
func esummaryXML(s *xnode) (Record, bool) {
	var r Record
	if id, ok := parseAs(SchemePMID, s.attr("uid")); ok {
		r.addID(id)
		r.Details.ID = id.Value
	}
	for _, ai := range s.kid("ArticleIds").kids("ArticleId") {
		xmlArticleID(&r, ai.kid("IdType").text(), ai.kid("Value").text())
	}
	if len(r.IDs) == 0 {
		return r, false
	}
	d := &r.Details
	d.Title = oneLine(s.kid("Title").text())
	if d.Venue = oneLine(s.kid("FullJournalName").text()); d.Venue == "" {
		d.Venue = oneLine(s.kid("Source").text())
	}
	d.Year = yearOf(s.kid("PubDate").text())
	for _, a := range s.kid("Authors").kids("Author") {
		if name := a.kid("Name").text(); name != "" && len(d.Authors) < maxAuthors {
			d.Authors = append(d.Authors, pubmedName(name, false))
		}
	}
	r.Text = d.Title
	return r, true
}
