package store

import (
	"reflect"
	"testing"

	"github.com/cosci-dev/cosci/internal/access"
)

func TestAccessRoundTrip(t *testing.T) { eachStore(t, testAccessRoundTrip) }

func testAccessRoundTrip(t *testing.T, s *Store) {
	if _, found, err := s.Access(tctx(t), "s"); err != nil || found {
		t.Fatalf("Access before PutAccess: found %v, err %v; want none", found, err)
	}
	rec := access.Record{SessionID: "s", Owner: "ada@lab", Grants: []access.Grant{
		{Who: "bob@lab", Level: access.Read, By: "ada@lab", At: "2026-11-27T09:00:00Z"},
	}}
	if err := s.PutAccess(tctx(t), "s", rec); err != nil {
		t.Fatal(err)
	}
	// A grant changes the record: it is replaced, unlike the write-once records.
	rec.Grants[0].Level = access.Steer
	rec.Grants = append(rec.Grants, access.Grant{Who: "cat@lab", Level: access.Read, By: "root@lab", At: "2026-11-27T09:01:00Z"})
	if err := s.PutAccess(tctx(t), "s", rec); err != nil {
		t.Fatal(err)
	}
	got, found, err := s.Access(tctx(t), "s")
	if err != nil || !found || !reflect.DeepEqual(got, rec) {
		t.Fatalf("Access = %+v, %v, %v; want %+v", got, found, err, rec)
	}
	if err := s.PutAccess(tctx(t), "other", rec); err == nil {
		t.Error("a record of session s was written to session other")
	}
	if _, err := s.PutFile(tctx(t), "s", AccessFile, []byte("{}")); err == nil {
		t.Error("a report artefact replaced the access record")
	}
}

func TestCreateAccess(t *testing.T) { eachStore(t, testCreateAccess) }

// testCreateAccess: a new session's record is written only where none exists; a start
// under an id that has one leaves its grants alone.
func testCreateAccess(t *testing.T, s *Store) {
	mine := access.Record{SessionID: "s", Owner: "ada@lab"}
	if created, err := s.CreateAccess(tctx(t), "s", mine); err != nil || !created {
		t.Fatalf("CreateAccess of a new session: %v, %v", created, err)
	}
	shared := access.Record{SessionID: "s", Owner: "ada@lab", Grants: []access.Grant{{Who: "bob@lab", Level: access.Read, By: "ada@lab", At: "now"}}}
	if err := s.PutAccess(tctx(t), "s", shared); err != nil {
		t.Fatal(err)
	}
	for _, owner := range []string{"mallory@lab", "ada@lab"} {
		if created, err := s.CreateAccess(tctx(t), "s", access.Record{SessionID: "s", Owner: owner}); err != nil || created {
			t.Errorf("CreateAccess by %s over an existing record: created %v, %v", owner, created, err)
		}
	}
	if got, _, _ := s.Access(tctx(t), "s"); !reflect.DeepEqual(got, shared) {
		t.Errorf("the record is %+v after the second start; want ada's with bob's grant", got)
	}
}
