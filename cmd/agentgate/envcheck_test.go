package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// cliCommand is the command bin args with env added to the test's.
func cliCommand(bin string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// findingsText joins findings one per line, for the comparisons.
func findingsText(fs []envFinding) string {
	var lines []string
	for _, f := range fs {
		lines = append(lines, f.String())
	}
	return strings.Join(lines, "\n")
}

// QWED-Agent spec v1.1 §9.7: the dynamic linker's injection variables
// are refused (LD_PRELOAD, LD_AUDIT, any other LD_*, DYLD_*,
// GLIBC_TUNABLES), the binding ones and empty values allowed;
// LD_LIBRARY_PATH is refused when another user could write where it
// points (/tmp).
func TestEnvIntegrity_AgentSpec9_7_LinkerVariables(t *testing.T) {
	got := checkLinkerEnv([]string{"PATH=/usr/bin", "LD_PRELOAD=/tmp/x.so", "LD_AUDIT=/tmp/a.so", "LD_LIBRARY_PATH=/tmp",
		"LD_BIND_NOW=1", "LD_BIND_NOT=1", "DYLD_INSERT_LIBRARIES=/tmp/y.dylib", "GLIBC_TUNABLES=glibc.malloc.check=3", "LD_DEBUG=", "OLD_LD_PRELOAD=x"}, os.Geteuid())
	var names []string
	for _, f := range got {
		if f.check != "dynamic-linker" {
			t.Fatalf("check %q, want dynamic-linker", f.check)
		}
		names = append(names, strings.TrimSuffix(strings.Fields(f.reason)[0], ":"))
	}
	want := []string{"DYLD_INSERT_LIBRARIES", "GLIBC_TUNABLES", "LD_AUDIT", "LD_PRELOAD", "LD_LIBRARY_PATH"}
	if !slices.Equal(names, want) {
		t.Fatalf("refused %v, want %v", names, want)
	}
}

// QWED-Agent spec v1.1 §9.7: an LD_LIBRARY_PATH of directories only root
// or the gate's user can write (a distro's or a vendor runtime's, as
// container images set) does not stop the gate; one that another user
// can write, that names the working directory (an empty, relative or
// $-token element), or a missing directory another user could create,
// does.
func TestEnvIntegrity_AgentSpec9_7_LibraryPath(t *testing.T) {
	uid := os.Geteuid()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sound := "LD_LIBRARY_PATH=" + dir + ":" + filepath.Join(dir, "missing", "lib") + ";/usr/lib"
	if got := checkLinkerEnv([]string{sound}, uid); len(got) != 0 {
		t.Fatalf("sound LD_LIBRARY_PATH refused: %v", got)
	}
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	want := "dynamic-linker: LD_LIBRARY_PATH: " + open + " has mode -rwxrwxrwx: writable by its group and other users\n" +
		"dynamic-linker: LD_LIBRARY_PATH: " + open + " has mode -rwxrwxrwx: writable by its group and other users\n" +
		"dynamic-linker: LD_LIBRARY_PATH holds \"lib\", which is not an absolute directory: the linker may load a library of the gate's from wherever it names\n" +
		"dynamic-linker: LD_LIBRARY_PATH holds \"/opt/$LIB\", which is not an absolute directory: the linker may load a library of the gate's from wherever it names\n" +
		"dynamic-linker: LD_LIBRARY_PATH has an empty element, which the linker reads as the working directory"
	bad := "LD_LIBRARY_PATH=" + open + ":" + filepath.Join(open, "not", "yet") + ":lib:/opt/$LIB::"
	if got := findingsText(checkLinkerEnv([]string{bad}, uid)); got != want {
		t.Fatalf("unsound LD_LIBRARY_PATH:\n%s\nwant\n%s", got, want)
	}
}

// QWED-Agent spec v1.1 §9.7: a system-wide preload list naming a library
// is refused; a missing one, or one of comments only, is not.
func TestEnvIntegrity_AgentSpec9_7_PreloadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ld.so.preload")
	if got := checkPreloadFile(p); len(got) != 0 {
		t.Fatalf("missing file: %v", got)
	}
	if err := os.WriteFile(p, []byte("# nothing\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := checkPreloadFile(p); len(got) != 0 {
		t.Fatalf("comments only: %v", got)
	}
	if err := os.WriteFile(p, []byte("# hook\n/usr/lib/libhook.so\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := findingsText(checkPreloadFile(p)); got != "dynamic-linker: "+p+" preloads /usr/lib/libhook.so into every process" {
		t.Fatalf("got %q", got)
	}
}

// QWED-Agent spec v1.1 §9.7: the code mapped into this (cgo) test
// process is its binary and the libraries it needs; a mapped library it
// does not need, a file deleted from disk and a memfd are each refused;
// anonymous, [vdso] and non-executable mappings are not looked at.
func TestEnvIntegrity_AgentSpec9_7_LoadedCode(t *testing.T) {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(maps), "/libc.so") {
		t.Fatalf("the test binary maps no libc: not the cgo build this test needs\n%s", maps)
	}
	if got := checkLoadedCode(string(maps), exe); len(got) != 0 {
		t.Fatalf("this process: %v", got)
	}
	injected := filepath.Join(t.TempDir(), "libinjected.so")
	if err := os.WriteFile(injected, []byte("not even ELF"), 0o755); err != nil {
		t.Fatal(err)
	}
	extra := "7f0000000000-7f0000001000 r-xp 00001000 fe:00 1 " + injected + "\n" +
		"7f0000002000-7f0000003000 r--p 00000000 fe:00 2 /tmp/data-only.bin\n" +
		"7f0000004000-7f0000005000 r-xp 00000000 fe:00 3 /usr/lib/libgone.so (deleted)\n" +
		"7f0000006000-7f0000007000 r-xp 00000000 00:01 4 /memfd:payload (deleted)\n" +
		"7f0000008000-7f0000009000 r-xp 00000000 00:00 0 \n" +
		"7f000000a000-7f000000b000 r-xp 00000000 00:00 0 [vdso]\n"
	want := "loaded-code: code is mapped from /usr/lib/libgone.so (deleted), which is not a file on disk\n" +
		"loaded-code: code is mapped from /memfd:payload (deleted), which is not a file on disk\n" +
		"loaded-code: " + injected + " is loaded into the gate, but neither its binary nor its libraries need it (LD_PRELOAD, LD_AUDIT or an injection)"
	if got := findingsText(checkLoadedCode(string(maps)+extra, exe)); got != want {
		t.Fatalf("with injected mappings:\n%s\nwant\n%s", got, want)
	}
	if got := checkLoadedCode("", exe); got != nil {
		t.Fatalf("no maps: %v", got)
	}
}

// QWED-Agent spec v1.1 §9.7 through the real binary: a preloaded library
// that unsets LD_PRELOAD in its constructor hides from the variable's
// check, not from the loaded-code check: serve refuses, naming it.
func TestEnvIntegrity_AgentSpec9_7_HiddenPreload(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	src, lib := filepath.Join(dir, "hide.c"), filepath.Join(dir, "libhide.so")
	if err := os.WriteFile(src, []byte("#include <stdlib.h>\n__attribute__((constructor)) static void hide(void) { unsetenv(\"LD_PRELOAD\"); }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-shared", "-fPIC", "-o", lib, src).CombinedOutput(); err != nil {
		t.Fatalf("compiling the preload library (gcc builds the binary's cgo parsers too): %v\n%s", err, out)
	}
	data := filepath.Join(dir, "data")
	out, err := cliCommand(bin, []string{"LD_PRELOAD=" + lib}, "serve", "--data", data, "--http", "127.0.0.1:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "loaded-code: "+lib+" is loaded into the gate") {
		t.Fatalf("hidden preload: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "dynamic-linker: LD_PRELOAD") {
		t.Fatalf("the library did not hide its variable, so the test shows nothing new:\n%s", out)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("the data dir exists (%v): a store was opened before the check", err)
	}
}

// QWED-Agent spec v1.1 §9.7: GODEBUG settings that weaken TLS, x509,
// HTTP parsing, exec lookup or memory-safety checks are refused, each
// named; diagnostics and the safe values of the same settings are not.
func TestEnvIntegrity_AgentSpec9_7_GODEBUG(t *testing.T) {
	for _, bad := range []string{"tls10server=1", "tlsrsakex=1", "tls3des=1", "x509negativeserial=1", "x509usefallbackroots=1",
		"httplaxcontentlength=1", "httpmuxgo121=1", "http2debug=2", "execerrdot=0", "cgocheck=0", "rsa1024min=0", "tlsmaxrsasize=16384"} {
		got := checkGODEBUG("GODEBUG", "gctrace=0,"+bad)
		if len(got) != 1 || got[0].check != "godebug" || !strings.Contains(got[0].reason, bad) {
			t.Fatalf("GODEBUG=%s: %v, want one godebug finding naming it", bad, got)
		}
	}
	for _, ok := range []string{"", "gctrace=1", "madvdontneed=1,asyncpreemptoff=1", "tls10server=0", "http2server=0", "x509usepolicies=1", "netdns=go", "panicnil=1", "unknownsetting=1"} {
		if got := checkGODEBUG("GODEBUG", ok); len(got) != 0 {
			t.Fatalf("GODEBUG=%q: %v, want allowed", ok, got)
		}
	}
}

// QWED-Agent spec v1.1 §9.7: GOTRACEBACK values that dump memory (keys
// included) are refused; the others are not.
func TestEnvIntegrity_AgentSpec9_7_GOTRACEBACK(t *testing.T) {
	for _, v := range []string{"crash", "wer"} {
		if got := checkGOTRACEBACK(v); len(got) != 1 || got[0].check != "gotraceback" {
			t.Fatalf("GOTRACEBACK=%s: %v", v, got)
		}
	}
	for _, v := range []string{"", "none", "single", "all", "system", "2"} {
		if got := checkGOTRACEBACK(v); len(got) != 0 {
			t.Fatalf("GOTRACEBACK=%s: %v, want allowed", v, got)
		}
	}
}

// QWED-Agent spec v1.1 §9.7: the trust roots of the outbound calls
// (SSL_CERT_FILE, each SSL_CERT_DIR directory) must be writable by
// nobody but their owner, root or the gate's user; a missing one is
// skipped, as Go skips it.
func TestEnvIntegrity_AgentSpec9_7_TrustRoots(t *testing.T) {
	dir := t.TempDir()
	bundle := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(bundle, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	uid := os.Geteuid()
	env := []string{"SSL_CERT_FILE=" + bundle, "SSL_CERT_DIR=" + dir + ":"}
	if got := checkTrustRoots(env, uid); len(got) != 0 {
		t.Fatalf("sound roots: %v", got)
	}
	if err := os.Chmod(bundle, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	want := "trust-roots: " + bundle + " has mode -rw-rw-rw-: writable by its group and other users\n" +
		"trust-roots: " + dir + " has mode -rwxrwxrwx: writable by its group and other users"
	if got := findingsText(checkTrustRoots(env, uid)); got != want {
		t.Fatalf("open roots:\n%s\nwant\n%s", got, want)
	}
	if got := checkTrustRoots([]string{"SSL_CERT_FILE=" + filepath.Join(dir, "missing.pem")}, uid); len(got) != 0 {
		t.Fatalf("missing bundle: %v", got)
	}
	if got := checkTrustRoots([]string{"PATH=/usr/bin"}, uid); len(got) != 0 {
		t.Fatalf("no roots set: %v", got)
	}
}

// QWED-Agent spec v1.1 §9.7: a release build (a tagged version) refuses
// replaced modules and modules without checksums; a development build
// (pseudo-version, +dirty, "(devel)") allows them; unsafe GODEBUG
// defaults recorded in the build are refused in both.
func TestEnvIntegrity_AgentSpec9_7_BuildInfo(t *testing.T) {
	deps := []*debug.Module{
		{Path: "example.com/good", Version: "v1.0.0", Sum: "h1:abc="},
		{Path: "example.com/replaced", Version: "v1.0.0", Replace: &debug.Module{Path: "../fork"}},
		{Path: "example.com/nosum", Version: "v1.2.0"},
	}
	build := func(version string, settings ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/agentgate/agentgate", Version: version}, Deps: deps, Settings: settings}
	}
	want := "build-info: release v1.4.0 replaces module example.com/replaced v1.0.0 by ../fork \n" +
		"build-info: release v1.4.0 links module example.com/nosum v1.2.0 without its checksum"
	if got := findingsText(checkBuildInfo(build("v1.4.0"))); got != want {
		t.Fatalf("release build:\n%s\nwant\n%s", got, want)
	}
	for _, dev := range []string{"(devel)", "", "v0.0.0-20261126095501-28ff2394a1b2", "v1.4.1-0.20261126095501-28ff2394a1b2", "v1.4.0+dirty"} {
		if got := checkBuildInfo(build(dev)); len(got) != 0 {
			t.Fatalf("development build %q: %v", dev, got)
		}
	}
	got := checkBuildInfo(build("(devel)", debug.BuildSetting{Key: "DefaultGODEBUG", Value: "httplaxcontentlength=1,panicnil=1"}))
	if len(got) != 1 || !strings.Contains(got[0].reason, "the build's default GODEBUG sets httplaxcontentlength=1") {
		t.Fatalf("unsafe default GODEBUG: %v", got)
	}
	if got := checkBuildInfo(nil); got != nil {
		t.Fatalf("no build info: %v", got)
	}
}

// QWED-Agent spec v1.1 §9.7: the binary must be owned by root or the
// gate's user, writable by nobody else, in a directory others cannot
// write (or a sticky one).
func TestEnvIntegrity_AgentSpec9_7_Executable(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "agentgate")
	if err := os.WriteFile(exe, []byte("#!/bin/true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	uid := os.Geteuid()
	if got := checkExecutable(exe, uid); len(got) != 0 {
		t.Fatalf("0755 binary: %v", got)
	}
	if err := os.Chmod(exe, 0o775); err != nil {
		t.Fatal(err)
	}
	if got := findingsText(checkExecutable(exe, uid)); got != "executable: "+exe+" has mode -rwxrwxr-x: writable by its group" {
		t.Fatalf("group-writable binary: %q", got)
	}
	if err := os.Chmod(exe, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := findingsText(checkExecutable(exe, uid+1)); uid != 0 && !strings.Contains(got, "not by the gate's user") {
		t.Fatalf("binary of another user: %q", got)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if got := findingsText(checkExecutable(exe, uid)); !strings.Contains(got, "its directory "+dir+" is writable by every user") {
		t.Fatalf("world-writable directory: %q", got)
	}
	if err := os.Chmod(dir, os.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	if got := checkExecutable(exe, uid); len(got) != 0 {
		t.Fatalf("sticky directory: %v", got)
	}
}

// QWED-Agent spec v1.1 §9.7: a data dir that is the root of its own
// volume holds the file system's lost+found, owned by root: that does
// not stop a gate that runs as another user; a keys folder of root's,
// or a root-owned entry that others may write, does.
func TestEnvIntegrity_AgentSpec9_7_DataDirVolumeRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files to root and to the gate's user")
	}
	const gate = 4242 // the gate's user
	data := t.TempDir()
	lost := filepath.Join(data, "lost+found")
	if err := os.Mkdir(lost, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(data, gate, gate); err != nil {
		t.Fatal(err)
	}
	if got := checkDataDir(data, gate); len(got) != 0 {
		t.Fatalf("a volume root's lost+found refused: %v", got)
	}
	if err := os.Chmod(lost, 0o777); err != nil {
		t.Fatal(err)
	}
	if got := findingsText(checkDataDir(data, gate)); got != "data-dir: "+lost+" has mode -rwxrwxrwx: writable by its group and other users" {
		t.Fatalf("a world-writable root entry: %q", got)
	}
	keys := filepath.Join(data, "keys")
	if err := os.Mkdir(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(lost, 0o700); err != nil {
		t.Fatal(err)
	}
	if got := findingsText(checkDataDir(data, gate)); got != "data-dir: "+keys+" is owned by uid 0, not by the gate's user (uid 4242)" {
		t.Fatalf("a keys folder of root's: %q", got)
	}
}

// QWED-Agent spec v1.1 §9.7: the data dir and its entries must be the
// gate's user's and writable by nobody else; the keys folder and the
// signing keys readable by nobody else. A missing data dir passes (the
// gate creates it 0700).
func TestEnvIntegrity_AgentSpec9_7_DataDir(t *testing.T) {
	uid := os.Geteuid()
	data := filepath.Join(t.TempDir(), "data")
	if got := checkDataDir(data, uid); len(got) != 0 {
		t.Fatalf("missing data dir: %v", got)
	}
	keys := filepath.Join(data, "keys")
	key := filepath.Join(keys, "1-abc.pem")
	if err := os.MkdirAll(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, mode := range map[string]os.FileMode{key: 0o600, filepath.Join(keys, ".tmp-1"): 0o644, filepath.Join(data, "admin_key.sha256"): 0o644} {
		if err := os.WriteFile(name, nil, mode); err != nil {
			t.Fatal(err)
		}
	}
	if got := checkDataDir(data, uid); len(got) != 0 {
		t.Fatalf("sound data dir: %v", got)
	}
	for _, c := range []struct {
		path string
		mode os.FileMode
		want string
	}{
		{data, 0o777, "data-dir: " + data + " has mode -rwxrwxrwx: writable by its group and other users"},
		{data, 0o720, "data-dir: " + data + " has mode -rwx-w----: writable by its group"},
		{keys, 0o750, "data-dir: " + keys + " has mode -rwxr-x---: readable by its group"},
		{key, 0o644, "signing-keys: " + key + " has mode -rw-r--r--: readable by its group and other users"},
		{filepath.Join(data, "admin_key.sha256"), 0o666, "data-dir: " + filepath.Join(data, "admin_key.sha256") + " has mode -rw-rw-rw-: writable by its group and other users"},
	} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(c.path, c.mode); err != nil {
			t.Fatal(err)
		}
		if got := findingsText(checkDataDir(data, uid)); got != c.want {
			t.Fatalf("%s %o:\n%s\nwant\n%s", c.path, c.mode, got, c.want)
		}
		if err := os.Chmod(c.path, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	if got := findingsText(checkDataDir(data, uid+1)); !strings.Contains(got, "is owned by uid") {
		t.Fatalf("data dir of another user: %q", got)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := findingsText(checkDataDir(file, uid)); got != "data-dir: "+file+" is not a directory" {
		t.Fatalf("a file as data dir: %q", got)
	}
}

// QWED-Agent spec v1.1 §9.7 and QWED protocol v1.0 §10.5: the TLS key is
// the gate's user's and 0600 at most, or root's and 0640 at most (when
// the gate is not root).
func TestEnvIntegrity_AgentSpec9_7_TLSKeyFile(t *testing.T) {
	key := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(key, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	uid := os.Geteuid()
	if err := checkTLSKeyFile(key, uid); err != nil {
		t.Fatal(err)
	}
	for _, m := range []os.FileMode{0o640, 0o604, 0o620} {
		if err := os.Chmod(key, m); err != nil {
			t.Fatal(err)
		}
		if err := checkTLSKeyFile(key, uid); err == nil {
			t.Fatalf("mode %o of the gate's user's key: accepted", m)
		}
	}
	if uid == 0 { // a root-owned key read by a gate of another user
		if err := os.Chmod(key, 0o640); err != nil {
			t.Fatal(err)
		}
		if err := checkTLSKeyFile(key, 10001); err != nil {
			t.Fatalf("root's 0640 key for uid 10001: %v", err)
		}
		if err := os.Chmod(key, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := checkTLSKeyFile(key, 10001); err == nil || !strings.Contains(err.Error(), "readable by other users") {
			t.Fatalf("root's 0644 key for uid 10001: %v", err)
		}
	} else if err := checkTLSKeyFile(key, uid+1); err == nil {
		t.Fatal("a key of another user: accepted")
	}
}

// QWED-Agent spec v1.1 §9.7 through the real binary: serve refuses to
// start in a compromised environment (exit 1, each failed check named)
// before it opens a store (the data dir is never created), in both
// deployments; --allow-insecure-env starts it with each failure logged as
// an error, and is not read from AGENTGATE_ALLOW_INSECURE_ENV; harmless
// GODEBUG settings and a distro's LD_LIBRARY_PATH start it.
func TestEnvIntegrity_AgentSpec9_7_ServeRefuses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	run := func(env []string, args ...string) (string, int, string) {
		t.Helper()
		data := filepath.Join(t.TempDir(), "data")
		cmd := cliCommand(bin, env, append([]string{"serve", "--data", data, "--http", "127.0.0.1:0"}, args...)...)
		out, err := cmd.CombinedOutput()
		code := 0
		if err != nil {
			code = cmd.ProcessState.ExitCode()
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Fatalf("env %v: the data dir exists (%v): a store was opened before the check", env, err)
		}
		return string(out), code, data
	}
	for _, c := range []struct {
		env  []string
		args []string
		want []string
	}{
		{[]string{"LD_PRELOAD=/nonexistent/agentgate-test-hook.so"}, nil, []string{"dynamic-linker: LD_PRELOAD is set"}},
		{[]string{"LD_AUDIT=/nonexistent/a.so", "LD_LIBRARY_PATH=/tmp/agentgate-test-nonexistent"}, nil, []string{"dynamic-linker: LD_AUDIT is set", "dynamic-linker: LD_LIBRARY_PATH: /tmp has mode"}},
		{[]string{"GODEBUG=x509negativeserial=1"}, nil, []string{"godebug: GODEBUG sets x509negativeserial=1"}},
		{[]string{"GOTRACEBACK=crash"}, nil, []string{"gotraceback: GOTRACEBACK=crash"}},
		{[]string{"LD_PRELOAD=/nonexistent/agentgate-test-hook.so", "AGENTGATE_ALLOW_INSECURE_ENV=true"}, nil, []string{"AGENTGATE_ALLOW_INSECURE_ENV is ignored", "dynamic-linker: LD_PRELOAD is set"}},
		{[]string{"LD_PRELOAD=/nonexistent/agentgate-test-hook.so"}, []string{"--kafka-brokers", "127.0.0.1:1"}, []string{"dynamic-linker: LD_PRELOAD is set"}},
	} {
		out, code, _ := run(c.env, c.args...)
		if code != 1 || !strings.Contains(out, "environment integrity (QWED-Agent spec v1.1 §9.7): refusing to start") {
			t.Fatalf("env %v: exit %d, output:\n%s", c.env, code, out)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Fatalf("env %v: output lacks %q:\n%s", c.env, w, out)
			}
		}
	}

	// A data dir other users may write.
	data := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(data, 0o777); err != nil {
		t.Fatal(err)
	}
	out, err := cliCommand(bin, nil, "serve", "--data", data, "--http", "127.0.0.1:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "data-dir: "+data+" has mode -rwxrwxrwx: writable by its group and other users") {
		t.Fatalf("world-writable data dir: %v\n%s", err, out)
	}
	if entries, _ := os.ReadDir(data); len(entries) != 0 {
		t.Fatalf("the refused gate wrote into its data dir: %v", entries)
	}

	// The escape hatch, and harmless settings.
	for _, c := range []struct {
		env  []string
		args []string
		logs string
	}{
		{[]string{"LD_PRELOAD=/nonexistent/agentgate-test-hook.so"}, []string{"--allow-insecure-env"}, `check=dynamic-linker reason="LD_PRELOAD is set`},
		{[]string{"GODEBUG=gctrace=0,madvdontneed=1", "GOTRACEBACK=all", "LD_BIND_NOW=1", "LD_LIBRARY_PATH=/usr/lib:/usr/local/lib"}, nil, ""},
	} {
		cmd, log, _ := cliServe(t, bin, append([]string{"--data", t.TempDir(), "--http", "127.0.0.1:0", "--api-key", "admin-key"}, c.args...), c.env)
		failed := strings.Contains(log.String(), `level=ERROR msg="environment integrity check failed`)
		if failed != (c.logs != "") || !strings.Contains(log.String(), c.logs) {
			t.Fatalf("env %v %v: the log lacks the failure %q:\n%s", c.env, c.args, c.logs, log)
		}
		cliStop(t, cmd)
	}
}

// QWED-Agent spec v1.1 §9.7 (second review): Debian and Ubuntu give each
// user a user-private group and, through pam_umask, the umask 002, so
// `mkdir data` and `go build` (make run) make a group-writable data dir
// and binary, writable by the user alone: the gate refused to start on
// such a machine. A group-writable file of the gate's user whose group is
// private (no listed member but the user, no other account's primary
// group, not root's) passes; a shared group is still refused.
func TestEnvIntegrity_AgentSpec9_7_UserPrivateGroup(t *testing.T) {
	uid, gid := os.Geteuid(), os.Getegid()
	if gid == 0 {
		if uid != 0 {
			t.Skip("the test user's group is root's")
		}
		gid = 4243
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	exe := filepath.Join(dir, "agentgate")
	if err := os.Mkdir(data, 0o775); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, []byte("#!/bin/true\n"), 0o775); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{data, exe} {
		if err := os.Chmod(p, 0o775); err != nil { // whatever the umask
			t.Fatal(err)
		}
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	accounts := func(passwd, group string) {
		t.Helper()
		pw, gr := filepath.Join(dir, "passwd"), filepath.Join(dir, "group")
		if err := os.WriteFile(pw, []byte(passwd), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(gr, []byte(group), 0o644); err != nil {
			t.Fatal(err)
		}
		accountFiles.passwd, accountFiles.group = pw, gr
	}
	t.Cleanup(func() { accountFiles.passwd, accountFiles.group = "/etc/passwd", "" })
	me := fmt.Sprintf("root:x:0:0::/root:/bin/sh\nann:x:%d:%d::/home/ann:/bin/sh\n", uid, gid)
	for _, c := range []struct {
		passwd, group string
		refused       bool
	}{
		{me, fmt.Sprintf("root:x:0:\nann:x:%d:\n", gid), false},
		{me, fmt.Sprintf("root:x:0:\nann:x:%d:ann\n", gid), false},
		{me, fmt.Sprintf("root:x:0:\nann:x:%d:ann,eve\n", gid), true},
		{me + fmt.Sprintf("eve:x:%d:%d::/home/eve:/bin/sh\n", uid+1, gid), fmt.Sprintf("ann:x:%d:\n", gid), true},
		{me, "root:x:0:\n", true},
	} {
		accounts(c.passwd, c.group)
		got := append(checkDataDir(data, uid), checkExecutable(exe, uid)...)
		if refused := len(got) == 2; refused != c.refused || (!c.refused && len(got) != 0) {
			t.Errorf("group %q: %v; want refused %v", c.group, got, c.refused)
		}
	}
}
