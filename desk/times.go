package main

// Times as people read them. The page gives every moment as a <time> element whose
// datetime is exact (RFC 3339) and whose text is readable without a script ("27 Nov 2026,
// 12:35 UTC"); the desk's script (static/live.js) rewrites the text in the viewer's own
// time zone, relative to now ("3 min ago", "yesterday 14:05"), and the title holds the
// exact local time, shown on hover. Durations are spelled out on the server: "2 h 14 min".

import (
	"fmt"
	"html/template"
	"time"
)

// timeTag is a moment (an RFC 3339 time a session or the store recorded) as a <time>
// element; text that is not such a time is shown as it is, escaped.
func timeTag(v any) template.HTML {
	var t time.Time
	switch v := v.(type) {
	case time.Time:
		t = v
	case string:
		p, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return template.HTML(template.HTMLEscapeString(v))
		}
		t = p
	default:
		return template.HTML(template.HTMLEscapeString(fmt.Sprint(v)))
	}
	if t.IsZero() {
		return ""
	}
	t = t.UTC()
	// Only digits, letters of the month and punctuation: nothing to escape.
	return template.HTML(fmt.Sprintf(`<time datetime="%s" title="%s">%s</time>`,
		t.Format(time.RFC3339), t.Format("Mon 2 Jan 2006, 15:04:05 MST"), t.Format("2 Jan 2006, 15:04 MST")))
}

// duration spells a duration as people say it: "45 s", "3 min", "2 h 14 min", "3 d 4 h".
func duration(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	case d < 24*time.Hour:
		h, m := int(d.Hours()), int(d.Minutes())%60
		if m == 0 {
			return fmt.Sprintf("%d h", h)
		}
		return fmt.Sprintf("%d h %d min", h, m)
	}
	days, h := int(d.Hours())/24, int(d.Hours())%24
	if h == 0 {
		return fmt.Sprintf("%d d", days)
	}
	return fmt.Sprintf("%d d %d h", days, h)
}
