package mcptasks

import "testing"

// A task resumed for work another server started is working, answers
// for its id, ends as any other, and is made once.
func TestResume(t *testing.T) {
	ts := New(Options{})
	if err := ts.Resume("shell-3", "shell 3: running for 1m"); err != nil {
		t.Fatal(err)
	}
	if !ts.Known("shell-3") || len(ts.Working()) != 1 {
		t.Fatalf("resumed task: known %v, working %v", ts.Known("shell-3"), ts.Working())
	}
	if err := ts.Resume("shell-3", "again"); err == nil {
		t.Error("a task resumed twice")
	}
	tk, err := ts.find(&idParams{TaskID: "shell-3"})
	if err != nil || tk.ttl != MaxTTL || tk.message != "shell 3: running for 1m" {
		t.Fatalf("find: %+v %v", tk, err)
	}
	if !ts.Cancel("shell-3", "stopped") || len(ts.Working()) != 0 {
		t.Errorf("cancel: working %v", ts.Working())
	}
}
