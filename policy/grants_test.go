package policy

import (
	"context"
	"sync"
	"testing"
	"time"
)

// grantList is a grants function a test can change.
type grantList struct {
	mu sync.Mutex
	gs []Grant
}

func (l *grantList) get() []Grant {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Grant(nil), l.gs...)
}

func (l *grantList) add(pattern string, deny bool) {
	p, err := ParseHostPattern(pattern)
	if err != nil {
		panic(err)
	}
	l.mu.Lock()
	l.gs = append(l.gs, Grant{Pattern: p, Deny: deny})
	l.mu.Unlock()
}

func TestGrantsWidenAndDenyWins(t *testing.T) {
	base, err := NewRules([]string{"static.example"}, []string{"denied.example", "10.0.0.9"})
	if err != nil {
		t.Fatal(err)
	}
	if base.Empty() {
		t.Errorf("rules with one allowed host are empty")
	}
	none, _ := NewRules(nil, nil)
	var l grantList
	r := none.WithGrants(l.get, 0)
	if none.Empty() == false || r.Empty() {
		t.Errorf("Empty: without grants %v, with grants %v", none.Empty(), r.Empty())
	}
	if ok, _ := r.Decide("api.example", 443); ok {
		t.Errorf("allowed before any grant")
	}
	l.add("api.example:443", false)
	l.add("*.denied.example", false)
	if ok, rule := r.Decide("api.example", 443); !ok || rule.Text != "granted api.example:443" {
		t.Errorf("after a grant: %v %q", ok, rule)
	}
	if ok, _ := r.Decide("api.example", 80); ok {
		t.Errorf("a grant of one port allowed another")
	}
	wide := base.WithGrants(l.get, 0)
	l.add("denied.example", false)
	if ok, rule := wide.Decide("denied.example", 443); ok {
		t.Errorf("a grant beat network.deny: %q", rule)
	}
	l.add("api.example:8080", true) // a user's "deny"
	if ok, rule := r.Decide("api.example", 8080); ok || rule.Text != "refused by the user (api.example:8080)" {
		t.Errorf("a deny answer: %v %q", ok, rule)
	}
	for host, want := range map[string]bool{"api.example": true, "static.example": false, "x.denied.example": true, "nope.example": false} {
		if got, _ := r.AllowsName(host); got != want {
			t.Errorf("AllowsName(%s) = %v", host, got)
		}
	}
	if ok, _ := wide.AllowsName("denied.example"); ok {
		t.Errorf("AllowsName beat a deny of every port")
	}
}

func TestAwait(t *testing.T) {
	none, _ := NewRules(nil, []string{"never.example"})
	var l grantList
	r := none.WithGrants(l.get, 2*time.Second)
	if r.Asks() != 2*time.Second || none.Asks() != 0 {
		t.Errorf("Asks: %v %v", r.Asks(), none.Asks())
	}
	// A grant that comes while the request waits lets it through.
	go func() { time.Sleep(300 * time.Millisecond); l.add("late.example", false) }()
	began := time.Now()
	if ok, _ := r.Await(context.Background(), "late.example", 443); !ok || time.Since(began) < 250*time.Millisecond {
		t.Errorf("a grant while waiting: %v after %s", ok, time.Since(began))
	}
	// A deny ends the wait at once; so does network.deny, and the end
	// of the context.
	l.add("no.example", true)
	began = time.Now()
	if ok, _ := r.Await(context.Background(), "no.example", 443); ok || time.Since(began) > 200*time.Millisecond {
		t.Errorf("a deny answer: %v after %s", ok, time.Since(began))
	}
	if ok, _ := r.Await(context.Background(), "never.example", 443); ok || r.Waitable("never.example", 443) {
		t.Errorf("network.deny waited")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	began = time.Now()
	if ok, _ := r.Await(ctx, "other.example", 443); ok || time.Since(began) > time.Second {
		t.Errorf("an ended context: %v after %s", ok, time.Since(began))
	}
	// Nothing comes: refused after the wait.
	began = time.Now()
	if ok, _ := r.Await(context.Background(), "other.example", 443); ok || time.Since(began) < 1900*time.Millisecond {
		t.Errorf("no grant: %v after %s", ok, time.Since(began))
	}
	if none.Waitable("x.example", 1) {
		t.Errorf("rules without grants wait")
	}
}
