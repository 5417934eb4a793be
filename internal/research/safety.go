package research

import (
	"fmt"
	"regexp"
	"strings"
)

// The safety screen refuses a research goal that asks for harm before any model sees it.
// It is a floor, not a judge: the reflection agent's safety scores screen each hypothesis
// too (see SafetyFloor). Patterns are matched on lower-cased text at word boundaries.
var (
	// Refused at every level: weapons of mass harm.
	screenAlways = []string{
		`bio ?weapons?`, `biological weapons?`, `chemical weapons?`, `nerve agents?`, `weaponi[sz]\w*`,
		`gain[- ]of[- ]function`, `enhance\w* (the )?(transmissibility|virulence|lethality)`,
		`mass casualt\w+`, `dirty bombs?`, `nuclear weapons?`,
	}
	// Refused at standard and strict: direct harm to people.
	screenStandard = []string{
		`explosives? (synthesis|manufactur\w*)`, `synthesi[sz]\w* (of )?(ricin|sarin|vx|anthrax|botulinum)`,
		`untraceable poisons?`, `evade (detection|screening)`,
	}
	// Refused only at strict: dual-use topics that need a human's sign-off.
	screenStrict = []string{
		`pathogens?`, `toxins?`, `human subjects? without consent`, `self[- ]replicating`,
	}
)

var screens = map[string]*regexp.Regexp{
	"relaxed":  compile(screenAlways),
	"standard": compile(screenAlways, screenStandard),
	"strict":   compile(screenAlways, screenStandard, screenStrict),
}

func compile(lists ...[]string) *regexp.Regexp {
	var all []string
	for _, l := range lists {
		all = append(all, l...)
	}
	return regexp.MustCompile(`\b(` + strings.Join(all, "|") + `)\b`)
}

// ScreenGoal refuses a goal the session's safety level does not allow.
func ScreenGoal(goal, level string) error {
	re, ok := screens[level]
	if !ok {
		return &FieldError{"config.safety_level", fmt.Sprintf("%q is not one of %s", level, strings.Join(SafetyLevels, ", "))}
	}
	if m := re.FindString(strings.ToLower(goal)); m != "" {
		return &FieldError{"research_goal", fmt.Sprintf("refused by the %s safety screen: it asks about %q. cosci does not research that", level, m)}
	}
	return nil
}

// SafetyFloor is the lowest safety score (0 to 10) a hypothesis may get from any review at a
// safety level; below it the hypothesis is excluded from the tournament, with the reason.
func SafetyFloor(level string) float64 {
	switch level {
	case "relaxed":
		return 2
	case "strict":
		return 5
	}
	return 3.5
}
