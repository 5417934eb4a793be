package citation

import (
	"regexp"
	"strings"
)

// British and American spelling: a quote that writes "tumour" for "tumor", "characterised"
// for "characterized", "haemoglobin" for "hemoglobin" or "centre" for "center" quotes the
// same words. american puts a lower-case word in one spelling, by the regular patterns of
// the two (-our/-or, -ise/-ize, -yse/-yze, -tre/-ter, -ogue/-og, -lled/-led, ae and oe in
// the Greek and Latin roots of medicine) and a short list of the rest.

var (
	ourRE   = regexp.MustCompile(`^(\pL{2,})our(s|ed|ing|al|ally|ite|ites|able|ful|less|er|ers|ism|ist|ists)?$`)
	iseRE   = regexp.MustCompile(`^(\pL{3,})is(e|ed|es|ing|ation|ations|er|ers|able)$`)
	lyseRE  = regexp.MustCompile(`lys(e|ed|es|ing|er|ers)$`)
	treRE   = regexp.MustCompile(`^(\pL{2,})(t|b)r(e|es|ed)$`)
	ogueRE  = regexp.MustCompile(`^(\pL{4,})ogue(s)?$`)
	lledRE  = regexp.MustCompile(`^(\pL{2,}[ae])ll(ed|ing|er|ers|ation)$`)
	aemiaRE = regexp.MustCompile(`aem(ia|ias|ic)$`)
)

// Only a collision of two words matters (both spellings of a word meet in one form either
// way): the patterns' prefixes are long enough that none is known ("four", "size" and
// "shoe" are not touched); treKept are the words in -tre/-bre whose -ter form is another
// word or none.
var treKept = setOf("timbre", "macabre", "genre", "acre", "ogre", "lucre", "mediocre", "massacre", "cadre")

// spellings are the British spellings no pattern covers, as American writes them.
var spellings = map[string]string{
	"ageing": "aging", "grey": "gray", "greys": "grays", "aluminium": "aluminum", "programme": "program",
	"programmes": "programs", "sulphur": "sulfur", "sulphate": "sulfate", "sulphide": "sulfide",
	"sulphonamide": "sulfonamide", "mould": "mold", "moulds": "molds", "tyre": "tire", "cheque": "check",
	"licence": "license", "defence": "defense", "offence": "offense", "pretence": "pretense", "practise": "practice",
	"practised": "practiced", "judgement": "judgment", "acknowledgement": "acknowledgment", "fulfil": "fulfill",
	"fulfils": "fulfills", "fulfilment": "fulfillment", "enrol": "enroll", "enrols": "enrolls",
	"enrolment": "enrollment", "skilful": "skillful", "wilful": "willful", "plough": "plow", "storey": "story",
	"kerb": "curb", "draught": "draft", "draughts": "drafts", "manoeuvre": "maneuver", "manoeuvres": "maneuvers",
	"coeliac": "celiac", "oestrogen": "estrogen", "oestrogens": "estrogens", "oestradiol": "estradiol",
	"foetus": "fetus", "foetal": "fetal", "foetuses": "fetuses", "oedema": "edema", "faeces": "feces",
	"faecal": "fecal", "diarrhoea": "diarrhea", "gonorrhoea": "gonorrhea", "amoeba": "ameba", "amoebae": "amebae",
	"oesophagus": "esophagus", "oesophageal": "esophageal", "caesarean": "cesarean", "anaesthesia": "anesthesia",
	"anaesthetic": "anesthetic", "anaesthetised": "anesthetized", "anaesthetized": "anesthetized",
	"aetiology": "etiology", "aetiological": "etiological", "orthopaedic": "orthopedic", "orthopaedics": "orthopedics",
	"encyclopaedia": "encyclopedia", "palaeontology": "paleontology", "archaeology": "archeology", "mediaeval": "medieval",
	"analyse": "analyze", "paralyse": "paralyze", "catalyse": "catalyze", "dialyse": "dialyze", "hydrolyse": "hydrolyze",
	"tonne": "ton", "tonnes": "tons", "whilst": "while", "amongst": "among", "artefact": "artifact", "artefacts": "artifacts",
	"sceptical": "skeptical", "sceptic": "skeptic", "furore": "furor", "behaviour": "behavior", "haem": "heme",
}

// roots are the ae and oe of the Greek and Latin roots medicine writes, as American does.
var roots = []struct{ british, american string }{
	{"haem", "hem"}, {"anaem", "anem"}, {"ischaem", "ischem"}, {"leukaem", "leukem"}, {"oedem", "edem"},
	{"oestr", "estr"}, {"faec", "fec"}, {"foet", "fet"}, {"paed", "ped"}, {"gynaec", "gynec"}, {"oesoph", "esoph"},
	{"aetio", "etio"}, {"anaesth", "anesth"}, {"caesar", "cesar"}, {"diarrhoe", "diarrhe"}, {"palaeo", "paleo"},
	{"amoeb", "ameb"}, {"coeli", "celi"}, {"dyspnoe", "dyspne"}, {"apnoe", "apne"}, {"hypoxaem", "hypoxem"},
	{"septicaem", "septicem"}, {"bacteraem", "bacterem"}, {"glycaem", "glycem"}, {"lipaem", "lipem"},
	{"oesin", "eosin"}, {"encyclopaed", "encycloped"}, {"orthopaed", "orthoped"},
}

// american is a lower-case word in American spelling.
func american(w string) string {
	if len(w) < 4 || !isLetters(w) {
		return w
	}
	if a, ok := spellings[w]; ok {
		return a
	}
	for _, r := range roots {
		if strings.HasPrefix(w, r.british) {
			return r.american + w[len(r.british):]
		}
	}
	if aemiaRE.MatchString(w) {
		w = aemiaRE.ReplaceAllString(w, "em$1")
	}
	switch {
	case ourRE.MatchString(w):
		return ourRE.ReplaceAllString(w, "${1}or$2")
	case iseRE.MatchString(w):
		return iseRE.ReplaceAllString(w, "${1}iz$2")
	case lyseRE.MatchString(w):
		return lyseRE.ReplaceAllString(w, "lyz$1")
	case treRE.MatchString(w) && !treKept[w]:
		m := treRE.FindStringSubmatch(w) // centre, centres, centred: center, centers, centered
		return m[1] + m[2] + "er" + map[string]string{"e": "", "es": "s", "ed": "ed"}[m[3]]
	case ogueRE.MatchString(w):
		return ogueRE.ReplaceAllString(w, "${1}og$2")
	case lledRE.MatchString(w):
		return lledRE.ReplaceAllString(w, "${1}l$2")
	}
	return w
}

func isLetters(w string) bool {
	for _, r := range w {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}
