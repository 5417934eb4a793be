package workflows

// LabDigest is the digest of a lab request that the session records beside it, and that a
// desk's signature of the request covers (internal/vouch, with the update's name as the
// act's kind): the desk signs what it sends with the very digest the session will make.
func LabDigest(name string, r any) string { return labDigest(name, r) }
