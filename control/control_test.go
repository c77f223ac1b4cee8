package control

import (
	"context"
	"errors"
	"net"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cshell/cshell/internal/safefs"
)

// serve starts a server on a socket in a fresh folder; the test ends it.
func serve(t *testing.T, s *Server) *safefs.Dir {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("unix sockets in a held folder: Linux and macOS")
	}
	d, err := safefs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l, err := Listen(d, "control.sock")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	served := make(chan struct{})
	go func() { s.Serve(l, done); close(served) }()
	t.Cleanup(func() {
		close(done)
		l.Close()
		<-served
		if _, err := d.Lstat("control.sock"); err == nil {
			t.Error("the socket's name outlived its listener")
		}
		d.Close()
	})
	return d
}

func dial(t *testing.T, d *safefs.Dir) *Conn {
	t.Helper()
	c, err := Dial(context.Background(), d, "control.sock")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestInfoAndProbe(t *testing.T) {
	touched := 0
	d := serve(t, &Server{
		Info:    func() Info { return Info{Session: "s1", Exposed: []Port{{Listen: "127.0.0.1:5173", Port: 5173}}} },
		Probe:   func(_ context.Context, port int) bool { return port == 5173 },
		Touched: func() { touched++ },
	})
	c := dial(t, d)
	if c.Pid() != os.Getpid() && runtime.GOOS == "linux" {
		t.Errorf("the peer is pid %d, this test is %d", c.Pid(), os.Getpid())
	}
	info, err := c.Info(context.Background())
	if err != nil || info.Session != "s1" || len(info.Exposed) != 1 || info.Exposed[0].Listen != "127.0.0.1:5173" {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	ready, err := dial(t, d).Probe(context.Background(), []int{5173, 8080})
	if err != nil || len(ready) != 2 || !ready[0] || ready[1] {
		t.Fatalf("Probe = %v, %v; want [true false]", ready, err)
	}
	if touched != 2 {
		t.Errorf("Touched %d times for 2 requests", touched)
	}
}

func TestInfoWithoutExposesIsAnEmptyList(t *testing.T) {
	d := serve(t, &Server{Info: func() Info { return Info{Session: "s"} }})
	info, err := dial(t, d).Info(context.Background())
	if err != nil || info.Exposed == nil {
		t.Fatalf("Info = %+v, %v", info, err)
	}
}

func TestKillIsAnsweredByTheOwner(t *testing.T) {
	kills := make(chan *Kill)
	d := serve(t, &Server{Kills: kills})
	go func() {
		k := <-kills
		if k.Signal != syscall.SIGTERM || k.Grace != 3*time.Second {
			t.Errorf("kill %v after %v", k.Signal, k.Grace)
		}
		if k.HungUp() {
			t.Error("a waiting client was taken for gone")
		}
		k.Answer(map[string]string{"id": "7", "status": "killed"})
	}()
	var end struct{ ID, Status string }
	if err := dial(t, d).Kill(context.Background(), syscall.SIGTERM, 3*time.Second, time.Second, &end); err != nil {
		t.Fatal(err)
	}
	if end.ID != "7" || end.Status != "killed" {
		t.Errorf("answer %+v", end)
	}
}

func TestAKillWhoseClientLeftIsSeen(t *testing.T) {
	kills := make(chan *Kill)
	d := serve(t, &Server{Kills: kills})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	c := dial(t, d)
	go func() { errc <- c.Kill(ctx, syscall.SIGTERM, 0, time.Minute, new(any)) }()
	k := <-kills
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled kill returned %v", err)
	}
	c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for !k.HungUp() {
		if time.Now().After(deadline) {
			t.Fatal("the client left, and the kill still waits for it")
		}
		time.Sleep(10 * time.Millisecond)
	}
	k.Drop()
}

func TestUnknownAndBrokenRequestsAreDropped(t *testing.T) {
	d := serve(t, &Server{Info: func() Info { return Info{} }})
	for _, req := range []string{"{}\n", "not json\n", `{"signal": 15}` + "\n", `{"probe": [1]}` + "\n"} {
		c := dial(t, d)
		c.c.Write([]byte(req))
		_ = c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		var b [1]byte
		if n, err := c.c.Read(b[:]); n != 0 || err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("%q: read %d bytes, %v; want a hang-up", req, n, err)
		}
	}
}

func TestDialRefusesWhatIsNoSocket(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("unix sockets: Linux and macOS")
	}
	d, err := safefs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := Dial(context.Background(), d, "control.sock"); !errors.Is(err, ErrNoServer) {
		t.Errorf("no socket: %v", err)
	}
	if err := d.WriteFile("control.sock", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Dial(context.Background(), d, "control.sock"); !errors.Is(err, ErrNoServer) {
		t.Errorf("a file: %v", err)
	}
	// A socket nobody serves any more.
	p, _ := d.SocketPath("dead.sock")
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	if _, err := Dial(context.Background(), d, "dead.sock"); !errors.Is(err, ErrNoServer) {
		t.Errorf("a dead socket: %v", err)
	}
}

func TestASilentClientHoldsNothingUp(t *testing.T) {
	d := serve(t, &Server{Info: func() Info { return Info{Session: "s"} }})
	silent := dial(t, d) // sends nothing
	_ = silent
	info, err := dial(t, d).Info(context.Background())
	if err != nil || info.Session != "s" {
		t.Fatalf("Info behind a silent client = %+v, %v", info, err)
	}
}

// Adopt names the asking process itself as the owner; the supervisor's
// refusal comes back as a sentence; a request that names another process
// is refused before the supervisor hears of it (Linux: SO_PEERCRED).
func TestAdopt(t *testing.T) {
	var got []int
	refuse := false
	d := serve(t, &Server{Adopt: func(pid int) error {
		got = append(got, pid)
		if refuse {
			return errors.New("shell 3 has no owner to replace")
		}
		return nil
	}})
	if err := dial(t, d).Adopt(context.Background()); err != nil || len(got) != 1 || got[0] != os.Getpid() {
		t.Fatalf("adopt: %v, owners %v", err, got)
	}
	refuse = true
	if err := dial(t, d).Adopt(context.Background()); err == nil || err.Error() != "shell 3 has no owner to replace" {
		t.Errorf("a refused adoption: %v", err)
	}
	if runtime.GOOS != "linux" {
		return
	}
	c := dial(t, d)
	var r adoptReply
	if err := c.ask(context.Background(), request{Adopt: 1}, RequestTimeout, &r); err != nil ||
		!strings.Contains(r.Error, "a process may only take a shell over for itself") || len(got) != 2 {
		t.Errorf("adopting for another process: %v %+v, owners %v", err, r, got)
	}
}
