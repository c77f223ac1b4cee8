package shells

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cshell/cshell/plan"
)

func TestWaitReadyOnALogLine(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, running("1"), "compiling\nlistening on :8080\n")
	meta, err := m.WaitReady(context.Background(), "1", ReadyOptions{Log: regexp.MustCompile(`listening on :\d+$`), Timeout: time.Minute})
	if err != nil || meta.ID != "1" {
		t.Errorf("WaitReady: %v %v", meta, err)
	}
	// Nothing asked: ready at once.
	if _, err := m.WaitReady(context.Background(), "1", ReadyOptions{}); err != nil {
		t.Errorf("no readiness asked: %v", err)
	}
	if _, err := m.WaitReady(context.Background(), "2", ReadyOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("no shell 2: %v", err)
	}
}

func TestWaitReadyWaitsForTheLine(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, running("1"), "compiling\nlisten")
	go appendLog(t, m, "1", "ing\n")
	if _, err := m.WaitReady(context.Background(), "1", ReadyOptions{Log: regexp.MustCompile(`^listening$`), Timeout: time.Minute}); err != nil {
		t.Errorf("WaitReady: %v", err)
	}
}

func TestWaitReadyGivesUp(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, running("1"), "compiling\n")
	words := &plan.Words{Show: func(id string) string { return "show(" + id + ")" }}
	_, err := m.WaitReady(context.Background(), "1", ReadyOptions{Log: regexp.MustCompile(`never`), Ports: []int{8080, 8081}, Timeout: 50 * time.Millisecond, Words: words})
	if !errors.Is(err, ErrNotReady) || errors.Is(err, ErrEnded) {
		t.Fatalf("WaitReady: %v", err)
	}
	for _, want := range []string{"shell 1 is not ready after 50ms", "port(s) 8080, 8081 accept no connection inside the shell", `no line of output matches "never"`, "show(1)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.WaitReady(ctx, "1", ReadyOptions{Log: regexp.MustCompile(`never`), Timeout: time.Hour}); !errors.Is(err, ErrNotReady) ||
		!strings.Contains(err.Error(), "cshell output 1") {
		t.Errorf("a cancelled wait: %v", err)
	}
}

func TestWaitReadyOfAShellThatEnded(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, exited("1", 3), "boom\n")
	meta, err := m.WaitReady(context.Background(), "1", ReadyOptions{Log: regexp.MustCompile(`ready`), Timeout: time.Hour})
	if !errors.Is(err, ErrEnded) || meta == nil || meta.ID != "1" || err.Error() != "shell 1 exited with 3 after 2s before it was ready" {
		t.Errorf("WaitReady: %v, %v", meta, err)
	}
	// A line written before the end still makes it ready.
	if _, err := m.WaitReady(context.Background(), "1", ReadyOptions{Log: regexp.MustCompile(`boom`), Timeout: time.Hour}); err != nil {
		t.Errorf("the line came before the end: %v", err)
	}
}

func TestScanLogAcrossReads(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, running("1"), "one\nREA")
	re := regexp.MustCompile(`^READY$`)
	ok, pos, carry := m.scanLog("1", re, 0, nil)
	if ok || pos != 7 || string(carry) != "REA" {
		t.Fatalf("first scan: %v %d %q", ok, pos, carry)
	}
	appendLog(t, m, "1", "DY\n")
	if ok, pos, _ := m.scanLog("1", re, pos, carry); !ok || pos != 10 {
		t.Errorf("second scan: %v %d", ok, pos)
	}
	if ok, pos, _ := m.scanLog("9", re, 4, nil); ok || pos != 4 {
		t.Errorf("no such shell: %v %d", ok, pos)
	}
}

func TestScanLogOfALineThatNeverEnds(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, running("1"), strings.Repeat("x", 1<<20+100)+"READY")
	if ok, _, _ := m.scanLog("1", regexp.MustCompile(`READY`), 0, nil); !ok {
		t.Error("a match at the end of a line longer than 1 MiB was missed")
	}
	ok, pos, carry := m.scanLog("1", regexp.MustCompile(`nothing`), 0, nil)
	if ok || pos != 1<<20+105 || len(carry) > 1<<20 {
		t.Errorf("no match: %v %d, %d bytes carried", ok, pos, len(carry))
	}
}

func TestJoinInts(t *testing.T) {
	if got := joinInts([]int{1, 22, 333}); got != "1, 22, 333" {
		t.Errorf("joinInts = %q", got)
	}
	if got := joinInts(nil); got != "" {
		t.Errorf("joinInts(nil) = %q", got)
	}
}

func TestReadyOf(t *testing.T) {
	o := readyOf(&plan.Ready{Ports: []int{80}, Log: `^up$`, Timeout: time.Second}, nil)
	if len(o.Ports) != 1 || o.Ports[0] != 80 || o.Timeout != time.Second || o.Log == nil || !o.Log.MatchString("up") {
		t.Errorf("readyOf: %+v", o)
	}
	if o := readyOf(&plan.Ready{Ports: []int{80}}, nil); o.Log != nil {
		t.Errorf("no log expression: %+v", o)
	}
}
