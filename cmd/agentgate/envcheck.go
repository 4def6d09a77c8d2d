package main

import (
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Environment integrity at start-up (QWED-Agent spec v1.1 §9.7,
// StartupHookGuard): before serve opens a store it checks what it can of
// its own environment, and refuses to start, naming each failed check,
// when something could have injected code into it, weakened its runtime
// or let another user change its keys or its log. docs/ARCHITECTURE.md,
// "TLS, HTTP/2 and environment integrity", gives the reasons.

// allowInsecureEnvFlag is serve's escape hatch: the checks run and their
// findings are logged as errors, and the gate starts anyway. It is read
// from the command line only (bindEnv skips it): what could set a bad
// variable in the environment must not be able to wave it through.
const allowInsecureEnvFlag = "allow-insecure-env"

// noEnvAnnotation marks a flag bindEnv does not read from the environment.
const noEnvAnnotation = "agentgate_no_env"

// envFinding is one failed check: the check's name and why it failed.
type envFinding struct {
	check, reason string
}

func (f envFinding) String() string { return f.check + ": " + f.reason }

// envInputs is what the checks look at; serve fills it from the process
// (processEnv), the tests by hand.
type envInputs struct {
	environ     []string
	build       *debug.BuildInfo // nil: none
	executable  string           // "" when unknown
	preloadFile string           // the dynamic linker's system-wide preload list
	maps        string           // the process's memory maps (/proc/self/maps; "" when unknown)
	dataDir     string
	tlsKey      string // "" without TLS
	uid         int
}

// processEnv returns the inputs of this process for serve's data dir and
// TLS key file.
func processEnv(dataDir, tlsKey string) envInputs {
	in := envInputs{environ: os.Environ(), preloadFile: "/etc/ld.so.preload", dataDir: dataDir, tlsKey: tlsKey, uid: os.Geteuid()}
	if info, ok := debug.ReadBuildInfo(); ok {
		in.build = info
	}
	if exe, err := os.Executable(); err == nil {
		in.executable = exe
	}
	if b, err := os.ReadFile("/proc/self/maps"); err == nil {
		in.maps = string(b)
	}
	return in
}

// checkEnvironment runs every check on in, in a fixed order.
func checkEnvironment(in envInputs) []envFinding {
	var out []envFinding
	out = append(out, checkLinkerEnv(in.environ, in.uid)...)
	out = append(out, checkPreloadFile(in.preloadFile)...)
	out = append(out, checkLoadedCode(in.maps, in.executable)...)
	out = append(out, checkGODEBUG("GODEBUG", lookupEnv(in.environ, "GODEBUG"))...)
	out = append(out, checkGOTRACEBACK(lookupEnv(in.environ, "GOTRACEBACK"))...)
	out = append(out, checkTrustRoots(in.environ, in.uid)...)
	out = append(out, checkBuildInfo(in.build)...)
	out = append(out, checkExecutable(in.executable, in.uid)...)
	out = append(out, checkDataDir(in.dataDir, in.uid)...)
	if in.tlsKey != "" {
		if err := checkTLSKeyFile(in.tlsKey, in.uid); err != nil {
			out = append(out, envFinding{"tls-key", err.Error()})
		}
	}
	return out
}

// guardEnvironment runs the checks on in: with findings it refuses
// (an error naming each one) unless allow, when it logs each at ERROR
// and lets serve start.
func guardEnvironment(in envInputs, allow bool, log *slog.Logger) error {
	found := checkEnvironment(in)
	if len(found) == 0 {
		return nil
	}
	if allow {
		for _, f := range found {
			log.Error("environment integrity check failed (QWED-Agent spec v1.1 §9.7); starting anyway because of --"+allowInsecureEnvFlag, "check", f.check, "reason", f.reason)
		}
		log.Warn("the gate runs in an environment that failed its integrity checks", "failed", len(found))
		return nil
	}
	var b strings.Builder
	b.WriteString("environment integrity (QWED-Agent spec v1.1 §9.7): refusing to start:")
	for _, f := range found {
		b.WriteString("\n  " + f.String())
	}
	b.WriteString("\nfix the environment, or start with --" + allowInsecureEnvFlag + " to run in it anyway")
	return errors.New(b.String())
}

// lookupEnv is the value of the last NAME= entry of environ.
func lookupEnv(environ []string, name string) string {
	v := ""
	for _, kv := range environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// harmlessLinkerVars are the dynamic linker variables that only make it
// bind earlier or not at all: hardening, not injection.
var harmlessLinkerVars = []string{"LD_BIND_NOW", "LD_BIND_NOT"}

// checkLinkerEnv refuses the variables through which the dynamic linker
// loads or looks up other code, or changes how it and libc behave: every
// LD_* (LD_PRELOAD, LD_AUDIT, LD_DEBUG_OUTPUT, …) but the harmless ones,
// macOS's DYLD_* and glibc's GLIBC_TUNABLES. The binary links libc (its
// C parsers use cgo), so these reach it. LD_LIBRARY_PATH, which distros,
// vendor runtimes and container images set, only changes where the
// libraries the binary needs are found: checkLibraryPath vets its
// directories instead of refusing it.
func checkLinkerEnv(environ []string, uid int) []envFinding {
	var names []string
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if v == "" || k == "LD_LIBRARY_PATH" {
			continue // set but empty: the linker ignores it
		}
		if (strings.HasPrefix(k, "LD_") && !slices.Contains(harmlessLinkerVars, k)) || strings.HasPrefix(k, "DYLD_") || k == "GLIBC_TUNABLES" {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	var out []envFinding
	for _, k := range names {
		out = append(out, envFinding{"dynamic-linker", k + " is set: the dynamic linker may have loaded code into the gate that is not its own; unset it"})
	}
	return append(out, checkLibraryPath(lookupEnv(environ, "LD_LIBRARY_PATH"), uid)...)
}

// checkLibraryPath refuses an LD_LIBRARY_PATH through which another user
// could have the linker load a library of the gate's: an empty or
// relative element (the working directory), one holding a $ token, or a
// directory (or, when it does not exist, its nearest existing ancestor,
// where it could be created) not owned by root or the gate's user or
// writable by its group or others. glibc splits it on ':' and ';'.
func checkLibraryPath(value string, uid int) []envFinding {
	if value == "" {
		return nil
	}
	var out []envFinding
	empty := false
	for _, dir := range strings.Split(strings.ReplaceAll(value, ";", ":"), ":") {
		if dir == "" {
			empty = true
			continue
		}
		if !filepath.IsAbs(dir) || strings.Contains(dir, "$") {
			out = append(out, envFinding{"dynamic-linker", fmt.Sprintf("LD_LIBRARY_PATH holds %q, which is not an absolute directory: the linker may load a library of the gate's from wherever it names", dir)})
			continue
		}
		p := filepath.Clean(dir)
		for {
			_, err := os.Stat(p)
			if !errors.Is(err, fs.ErrNotExist) || p == filepath.Dir(p) {
				break
			}
			p = filepath.Dir(p)
		}
		if err := checkOwnedPath(p, uid, true, 0o022); err != nil {
			out = append(out, envFinding{"dynamic-linker", "LD_LIBRARY_PATH: " + err.Error()})
		}
	}
	if empty {
		out = append(out, envFinding{"dynamic-linker", "LD_LIBRARY_PATH has an empty element, which the linker reads as the working directory"})
	}
	return out
}

// checkPreloadFile refuses a system-wide preload list that names a
// library (the file of LD_PRELOAD for every process).
func checkPreloadFile(path string) []envFinding {
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return []envFinding{{"dynamic-linker", fmt.Sprintf("reading %s: %v", path, err)}}
	}
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			return []envFinding{{"dynamic-linker", fmt.Sprintf("%s preloads %s into every process", path, line)}}
		}
	}
	return nil
}

// checkLoadedCode refuses code mapped into the process that its binary
// did not ask for: an executable mapping of a file that is neither the
// binary nor a library the binary needs (its ELF interpreter and DT_NEEDED
// entries, and theirs, by soname), or of a file no longer on disk or in
// memory only (memfd). A preloaded library that unset LD_PRELOAD in its
// constructor hides from checkLinkerEnv, not from its mapping. Libraries
// opened later (the resolver's NSS modules) are not loaded yet when serve
// checks. maps is /proc/self/maps ("" skips the check), exe the binary.
func checkLoadedCode(maps, exe string) []envFinding {
	if maps == "" || exe == "" {
		return nil
	}
	var out []envFinding
	var libs []string // the mapped files, in order, once each
	for _, line := range strings.Split(maps, "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.Contains(f[1], "x") {
			continue
		}
		path := strings.Join(f[5:], " ")
		switch {
		case !strings.HasPrefix(path, "/") || path == exe || path == exe+" (deleted)":
			// anonymous, [vdso], [vsyscall]; the binary (checkExecutable)
		case strings.HasPrefix(path, "/memfd:") || strings.HasSuffix(path, " (deleted)"):
			out = append(out, envFinding{"loaded-code", "code is mapped from " + path + ", which is not a file on disk"})
		case !slices.Contains(libs, path):
			libs = append(libs, path)
		}
	}
	wanted := map[string]bool{}
	addNeeded := func(path string) {
		ef, err := elf.Open(path)
		if err != nil {
			return
		}
		defer ef.Close()
		needed, _ := ef.ImportedLibraries()
		for _, n := range needed {
			wanted[n] = true
		}
		for _, p := range ef.Progs {
			if p.Type == elf.PT_INTERP {
				b := make([]byte, p.Filesz)
				if _, err := p.ReadAt(b, 0); err == nil {
					wanted[filepath.Base(strings.TrimRight(string(b), "\x00"))] = true
				}
			}
		}
	}
	addNeeded(exe)
	known := map[string]bool{}
	for grew := true; grew; {
		grew = false
		for _, lib := range libs {
			if !known[lib] && (wanted[soname(lib)] || wanted[filepath.Base(lib)]) {
				known[lib], grew = true, true
				addNeeded(lib)
			}
		}
	}
	for _, lib := range libs {
		if !known[lib] {
			out = append(out, envFinding{"loaded-code", lib + " is loaded into the gate, but neither its binary nor its libraries need it (LD_PRELOAD, LD_AUDIT or an injection)"})
		}
	}
	return out
}

// soname is the DT_SONAME of the library at path ("" if none).
func soname(path string) string {
	ef, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer ef.Close()
	names, _ := ef.DynString(elf.DT_SONAME)
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// unsafeGODEBUG are the GODEBUG settings that weaken the gate, each with
// the values that do: old TLS versions, suites and signatures; x509
// checks turned off; limits on untrusted input lifted; request smuggling
// (lax Content-Length) and the pre-1.22 router; HTTP/2 frame logging
// (headers, credentials included); exec from the current directory;
// turned-off memory-safety checks of cgo and pointers; the html/template
// escapes; a predictable math/rand. A value not listed (the default, or
// a setting that only changes diagnostics or scheduling, as gctrace or
// madvdontneed) is allowed. "*" is any value.
var unsafeGODEBUG = map[string][]string{
	"tls10server":              {"1"},
	"tls3des":                  {"1"},
	"tlsrsakex":                {"1"},
	"tlssha1":                  {"1"},
	"tlsunsafeekm":             {"1"},
	"tlsmaxrsasize":            {"*"},
	"tlsmlkem":                 {"0"},
	"tlssecpmlkem":             {"0"},
	"x509sha1":                 {"1"},
	"x509negativeserial":       {"1"},
	"x509usefallbackroots":     {"1"},
	"x509usepolicies":          {"0"},
	"rsa1024min":               {"0"},
	"cryptocustomrand":         {"1"},
	"httplaxcontentlength":     {"1"},
	"httpmuxgo121":             {"1"},
	"http2debug":               {"1", "2"},
	"httpcookiemaxnum":         {"0"},
	"urlmaxqueryparams":        {"0"},
	"multipartmaxheaders":      {"*"},
	"multipartmaxparts":        {"*"},
	"tarinsecurepath":          {"1"},
	"zipinsecurepath":          {"1"},
	"execerrdot":               {"0"},
	"cgocheck":                 {"0"},
	"invalidptr":               {"0"},
	"jstmpllitinterp":          {"1"},
	"htmlmetacontenturlescape": {"0"},
	"randautoseed":             {"0"},
}

// checkGODEBUG refuses the unsafe settings of a GODEBUG value (the
// variable, or the defaults the build recorded, named by source).
func checkGODEBUG(source, value string) []envFinding {
	var out []envFinding
	for _, kv := range strings.Split(value, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		bad, listed := unsafeGODEBUG[k]
		if listed && (slices.Contains(bad, v) || slices.Contains(bad, "*")) {
			out = append(out, envFinding{"godebug", fmt.Sprintf("%s sets %s=%s, which weakens the gate; remove it", source, k, v)})
		}
	}
	return out
}

// checkGOTRACEBACK refuses the settings that make a fatal error dump the
// process's memory (crash: a core file; wer: Windows Error Reporting),
// where the signing keys, the TLS key and the admin key would be.
func checkGOTRACEBACK(value string) []envFinding {
	if v := strings.TrimSpace(value); v == "crash" || v == "wer" {
		return []envFinding{{"gotraceback", "GOTRACEBACK=" + v + " dumps the process's memory, keys included, on a fatal error; use single, all or system"}}
	}
	return nil
}

// checkTrustRoots refuses an SSL_CERT_FILE, or a directory of
// SSL_CERT_DIR, that another user could write: the roots the gate's
// outbound calls (webhooks, businesses, proxied agents, JWKS) trust, so
// whoever writes them can read and answer those calls. Setting them is
// the operator's choice (a private CA); their permissions are checked. A
// path that does not exist is skipped (Go skips it too).
func checkTrustRoots(environ []string, uid int) []envFinding {
	var paths []string
	if f := lookupEnv(environ, "SSL_CERT_FILE"); f != "" {
		paths = append(paths, f)
	}
	for _, d := range filepath.SplitList(lookupEnv(environ, "SSL_CERT_DIR")) {
		if d != "" {
			paths = append(paths, d)
		}
	}
	var out []envFinding
	for _, p := range paths {
		if err := checkOwnedPath(p, uid, true, 0o022); err != nil && !errors.Is(err, fs.ErrNotExist) {
			out = append(out, envFinding{"trust-roots", err.Error()})
		}
	}
	return out
}

// pseudoVersion matches the commit part of a Go pseudo-version.
var pseudoVersion = regexp.MustCompile(`\d{14}-[0-9a-f]{12}$`)

// releaseBuild reports whether version (the main module's) is a tagged
// release: a semantic version, not a pseudo-version, not +dirty. Builds
// in a work tree (pseudo-versions, "(devel)" with -buildvcs=false) are
// development builds.
func releaseBuild(version string) bool {
	return strings.HasPrefix(version, "v") && !strings.Contains(version, "+") && !pseudoVersion.MatchString(version)
}

// checkBuildInfo refuses unsafe GODEBUG defaults recorded in the build
// (go.mod's godebug, //go:debug), and, in a release build, a module
// replaced by another or without its go.sum hash: code that the checksum
// database did not vouch for. Development builds may replace modules.
func checkBuildInfo(info *debug.BuildInfo) []envFinding {
	if info == nil {
		return nil
	}
	var out []envFinding
	for _, s := range info.Settings {
		if s.Key == "DefaultGODEBUG" {
			out = append(out, checkGODEBUG("the build's default GODEBUG", s.Value)...)
		}
	}
	if !releaseBuild(info.Main.Version) {
		return out
	}
	for _, d := range info.Deps {
		switch {
		case d.Replace != nil:
			out = append(out, envFinding{"build-info", fmt.Sprintf("release %s replaces module %s %s by %s %s", info.Main.Version, d.Path, d.Version, d.Replace.Path, d.Replace.Version)})
		case d.Sum == "":
			out = append(out, envFinding{"build-info", fmt.Sprintf("release %s links module %s %s without its checksum", info.Main.Version, d.Path, d.Version)})
		}
	}
	return out
}

// checkExecutable refuses a binary another user could replace: one not
// owned by root or the gate's user, writable by group or others, or in a
// directory others may write without the sticky bit.
func checkExecutable(path string, uid int) []envFinding {
	if path == "" {
		return nil
	}
	var out []envFinding
	if err := checkOwnedPath(path, uid, true, 0o022); err != nil {
		out = append(out, envFinding{"executable", err.Error()})
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm()&0o002 != 0 && fi.Mode()&fs.ModeSticky == 0 {
		out = append(out, envFinding{"executable", fmt.Sprintf("%s: its directory %s is writable by every user", path, dir)})
	}
	return out
}

// checkOwnedPath checks that path is owned by uid (or root, when
// rootOK) and has none of the permission bits of deny.
func checkOwnedPath(path string, uid int, rootOK bool, deny fs.FileMode) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if owner, ok := ownerOf(fi); ok && owner != uid && !(rootOK && owner == 0) {
		return fmt.Errorf("%s is owned by uid %d, not by the gate's user (uid %d)", path, owner, uid)
	}
	if m := fi.Mode().Perm(); m&deny != 0 && !(m&deny == 0o020 && privateGroup(fi, uid)) {
		return fmt.Errorf("%s has mode %s: %s", path, m, permIssue(m&deny))
	}
	return nil
}

// accountFiles are the group and user databases privateGroup reads
// ("" for group: none, so no group is private; the tests set them).
var accountFiles = struct{ group, passwd string }{"/etc/group", "/etc/passwd"}

// privateGroup reports whether fi, owned by the gate's user (uid), has
// for group a user-private group: one whose only possible member is that
// user — no member listed in the group database but the user, no other
// account with it as primary group — and not root's group. Debian and
// Ubuntu give every user one (USERGROUPS_ENAB) and, through pam_umask,
// the umask 002 with it, so a data dir or a binary the user made is
// group-writable, by the user alone. A group the files do not list is not
// private (fail closed).
func privateGroup(fi fs.FileInfo, uid int) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != uid || st.Gid == 0 || accountFiles.group == "" {
		return false
	}
	gid := fmt.Sprint(st.Gid)
	users, err := os.ReadFile(accountFiles.passwd)
	if err != nil {
		return false
	}
	name := ""
	for _, line := range strings.Split(string(users), "\n") {
		f := strings.Split(line, ":")
		if len(f) < 4 {
			continue
		}
		if f[2] == fmt.Sprint(uid) {
			name = f[0]
		} else if f[3] == gid {
			return false // another account's primary group
		}
	}
	groups, err := os.ReadFile(accountFiles.group)
	if err != nil || name == "" {
		return false
	}
	for _, line := range strings.Split(string(groups), "\n") {
		f := strings.Split(line, ":")
		if len(f) < 4 || f[2] != gid {
			continue
		}
		for _, m := range strings.Split(f[3], ",") {
			if m != "" && m != name {
				return false
			}
		}
		return true
	}
	return false
}

// permIssue says what the permission bits m give away.
func permIssue(m fs.FileMode) string {
	var who []string
	if m&0o070 != 0 {
		who = append(who, "its group")
	}
	if m&0o007 != 0 {
		who = append(who, "other users")
	}
	what := "writable"
	if m&0o044 != 0 {
		what = "readable"
		if m&0o022 != 0 {
			what = "readable and writable"
		}
	}
	return what + " by " + strings.Join(who, " and ")
}

// ownerOf is the uid owning fi's file.
func ownerOf(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// checkDataDir checks the data dir, when it exists (the gate creates a
// missing one 0700): it owned by the gate's user, every entry directly
// in it by the gate's user or root, and all writable by nobody else; its keys folder and every key
// in it readable by nobody else (the signing keys).
func checkDataDir(dir string, uid int) []envFinding {
	if dir == "" {
		return nil
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return []envFinding{{"data-dir", err.Error()}}
	case !fi.IsDir():
		return []envFinding{{"data-dir", dir + " is not a directory"}}
	}
	var out []envFinding
	if err := checkOwnedPath(dir, uid, false, 0o022); err != nil {
		return []envFinding{{"data-dir", err.Error()}}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []envFinding{{"data-dir", err.Error()}}
	}
	for _, e := range entries {
		// An entry may be root's (a file system's lost+found, when the
		// data dir is the root of its own volume): only root can change
		// it, and root can change anything. The keys folder is the gate's.
		deny, rootOK := fs.FileMode(0o022), true
		if e.Name() == "keys" {
			deny, rootOK = 0o077, false
		}
		if err := checkOwnedPath(filepath.Join(dir, e.Name()), uid, rootOK, deny); err != nil {
			out = append(out, envFinding{"data-dir", err.Error()})
		}
	}
	keys := filepath.Join(dir, "keys")
	entries, err = os.ReadDir(keys)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return append(out, envFinding{"signing-keys", err.Error()})
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue // an interrupted creation's temporary file, ignored by the keyring
		}
		if err := checkOwnedPath(filepath.Join(keys, e.Name()), uid, false, 0o077); err != nil {
			out = append(out, envFinding{"signing-keys", err.Error()})
		}
	}
	return out
}

// checkTLSKeyFile applies PostgreSQL's rule for a server key: owned by the
// gate's user and readable by it alone, or owned by root and at most
// readable by its group (a key shared through a group such as ssl-cert).
func checkTLSKeyFile(path string, uid int) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	owner, ok := ownerOf(fi)
	if !ok {
		return nil
	}
	deny := fs.FileMode(0o077)
	switch {
	case owner == 0 && uid != 0:
		deny = 0o037
	case owner != uid:
		return fmt.Errorf("%s is owned by uid %d, not by the gate's user (uid %d) or root", path, owner, uid)
	}
	if m := fi.Mode().Perm(); m&deny != 0 {
		return fmt.Errorf("%s has mode %s: %s", path, m, permIssue(m&deny))
	}
	return nil
}

// markNoEnv makes bindEnv skip the flag name of cmd.
func markNoEnv(cmd *cobra.Command, name string) {
	_ = cmd.Flags().SetAnnotation(name, noEnvAnnotation, []string{"true"})
}
