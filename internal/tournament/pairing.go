package tournament

// Player is what pairing needs to know about a hypothesis.
type Player struct {
	ID      string
	Elo     float64
	Matches int  // played so far
	New     bool // entered the tournament since the last round: a newcomer whatever Matches says
}

// Match is one pairing to play: a single comparison (Turns 1) or, between two top-ranked
// players, a debate of Turns turns (see Schedule).
type Match struct {
	A      string `json:"a"`
	B      string `json:"b"`
	Debate bool   `json:"debate,omitempty"`
	Turns  int    `json:"turns"`
	// N numbers the match in its session, from 1, where the same pair may meet again (the
	// workflow sets it, so that each meeting is a turn of its own); 0 where a pair meets
	// once at most.
	N int `json:"n,omitempty"`
}
