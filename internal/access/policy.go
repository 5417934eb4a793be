package access

import (
	"bytes"
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"
)

// Policy gives roles: to identities by name, and to the identity provider's groups.
//
//	admins: [ada@lab.example]
//	scientists: [bob@lab.example]
//	groups:
//	  admin: [cosci-admins]
//	  scientist: [cosci-scientists, lab]
//
// "*" in scientists makes every signed-in identity a scientist.
type Policy struct {
	Admins     []string `yaml:"admins"`
	Scientists []string `yaml:"scientists"`
	Groups     struct {
		Admin     []string `yaml:"admin"`
		Scientist []string `yaml:"scientist"`
	} `yaml:"groups"`
}

// ParsePolicy reads a policy file; an unknown key is refused, so a typo never grants
// nothing silently.
func ParsePolicy(b []byte) (Policy, error) {
	var p Policy
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil && err.Error() != "EOF" {
		return Policy{}, fmt.Errorf("policy: %w", err)
	}
	return p, nil
}

// Roles are the roles the policy gives an identity with these groups.
func (p Policy) Roles(id string, groups []string) []Role {
	var roles []Role
	in := func(names []string) bool { return slices.Contains(names, id) }
	member := func(names []string) bool {
		return slices.ContainsFunc(groups, func(g string) bool { return slices.Contains(names, g) })
	}
	if in(p.Admins) || member(p.Groups.Admin) {
		roles = append(roles, Admin)
	}
	if in(p.Scientists) || slices.Contains(p.Scientists, "*") || member(p.Groups.Scientist) {
		roles = append(roles, Scientist)
	}
	return roles
}
