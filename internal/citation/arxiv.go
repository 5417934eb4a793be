package citation

// arXiv: the entries of the arXiv API's Atom feed.

// atomEntry reads one entry of arXiv's Atom feed (the feed's own title and id are not a
// record; nor is the entry arXiv gives for a malformed query, whose id is no arXiv id).
func atomEntry(e *xnode) (Record, bool) {
	var r Record
	rawID := oneLine(e.kid("id").text())
	if id, ok := parseLink(rawID); ok && id.Scheme == SchemeArXiv {
		r.addID(id)
		r.Details.ID = id.Value
	}
	for _, k := range e.kids("doi") {
		if id, ok := parseAs(SchemeDOI, oneLine(k.text())); ok {
			r.addID(id)
		}
	}
	if len(r.IDs) == 0 {
		return r, false
	}
	d := &r.Details
	d.Title = oneLine(e.kid("title").text())
	d.Year = yearOf(e.kid("published").text())
	d.Venue = oneLine(e.kid("journal_ref").text())
	d.URL = rawID
	for _, l := range e.kids("link") {
		if l.attr("rel") == "alternate" && l.attr("href") != "" {
			d.URL = l.attr("href")
		}
	}
	for _, a := range e.kids("author") {
		if name := a.kid("name").text(); name != "" && len(d.Authors) < maxAuthors {
			d.Authors = append(d.Authors, givenFirst(name))
		}
	}
	r.Text = d.Title + "\n" + oneLine(e.kid("summary").text())
	return r, true
}
