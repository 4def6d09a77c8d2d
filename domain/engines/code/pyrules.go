package code

import "strings"

// The Python rules.
var (
	pyExec       = rule("PY-EXEC-001", SevCritical, "execution", "dynamic code execution (eval, exec) of code not known statically")
	pyExecConst  = rule("PY-EXEC-002", SevHigh, "execution", "eval/exec of a constant string whose own analysis found nothing blocking: dynamic execution all the same")
	pyCompile    = rule("PY-EXEC-003", SevHigh, "execution", "compile, dynamic import or runpy: code or modules chosen at run time")
	pyProc       = rule("PY-PROC-001", SevCritical, "process", "process execution (os.system, os.popen, os.exec*, os.spawn*, subprocess, pty.spawn)")
	pyProcCtl    = rule("PY-PROC-002", SevHigh, "process", "process control (fork, kill, setuid)")
	pyNative     = rule("PY-NATIVE-001", SevCritical, "native", "native code through ctypes / cffi")
	pyDeser      = rule("PY-DESER-001", SevHigh, "deserialization", "unsafe deserialization (pickle, marshal, shelve, yaml.load)")
	pyFileWrite  = rule("PY-FILE-001", SevMedium, "file", "file write or creation (open for writing, pathlib write, copy, move, mkdir)")
	pyFileDelete = rule("PY-FILE-002", SevHigh, "file", "file deletion (os.remove, shutil.rmtree, pathlib unlink); critical on a system root")
	pyFilePerm   = rule("PY-FILE-003", SevMedium, "file", "permission or ownership change (chmod, chown)")
	pyFileSens   = rule("PY-FILE-004", SevHigh, "file", "access to a sensitive path (credentials, /etc/shadow, system directories)")
	pyNet        = rule("PY-NET-001", SevMedium, "network", "network access (socket, urllib, requests, http.client, …)")
	pyObfLookup  = rule("PY-OBF-001", SevHigh, "obfuscation", "dynamic lookup of a dangerous name (getattr, builtins dict, globals()[…], computed name)")
	pyObfPayload = rule("PY-OBF-002", SevCritical, "obfuscation", "decoded payload (base64, hex, rot13, zlib, …) passed to eval/exec")
	pyObfMutate  = rule("PY-OBF-003", SevHigh, "obfuscation", "mutation of builtins or sys.modules")
	pyObfIntro   = rule("PY-OBF-004", SevHigh, "obfuscation", "introspection used for sandbox escapes (__subclasses__, __globals__, frames)")
	pyImport     = rule("PY-IMPORT-001", SevInfo, "import", "import of a module that reaches processes, native code, the network or deserialization")
	pyImportStar = rule("PY-IMPORT-002", SevLow, "import", "wildcard import of such a module (hides which names are used)")
	pyImportRun  = rule("PY-IMPORT-003", SevHigh, "import", "import of a module or callable that exists to run processes or load code (subprocess, pty, runpy, importlib, os.system, eval, …)")
	pyEnv        = rule("PY-ENV-001", SevLow, "environment", "environment variable access (may read secrets)")
	pyLimit      = rule("PY-LIMIT-001", SevHigh, "obfuscation", "nested code deeper than the analyser follows (MaxPayloadDepth)")
	pyQualExcept = rule("PY-QUAL-001", SevInfo, "quality", "bare except: swallows every error, KeyboardInterrupt and SystemExit included")
	pyQualLoop   = rule("PY-QUAL-002", SevLow, "quality", "while True without break: the loop never ends by itself")
	pyQualMut    = rule("PY-QUAL-003", SevInfo, "quality", "mutable default argument (shared between calls)")
)

// pyCalls maps a canonical callable to its rule.
var pyCalls = map[string]string{
	"builtins.eval": pyExec, "builtins.exec": pyExec, "builtins.execfile": pyExec,
	"builtins.compile": pyCompile, "builtins.__import__": pyCompile, "importlib.import_module": pyCompile,
	"runpy.run_path": pyCompile, "runpy.run_module": pyCompile, "code.interact": pyCompile,
	"code.InteractiveInterpreter": pyCompile, "code.InteractiveConsole": pyCompile,
	"os.system": pyProc, "os.popen": pyProc, "os.popen2": pyProc, "os.popen3": pyProc, "os.popen4": pyProc,
	"os.posix_spawn": pyProc, "os.posix_spawnp": pyProc, "os.startfile": pyProc,
	"pty.spawn": pyProc, "platform.popen": pyProc, "commands.getoutput": pyProc, "commands.getstatusoutput": pyProc,
	"asyncio.create_subprocess_exec": pyProc, "asyncio.create_subprocess_shell": pyProc,
	"os.fork": pyProcCtl, "os.forkpty": pyProcCtl, "pty.fork": pyProcCtl, "os.kill": pyProcCtl, "os.killpg": pyProcCtl,
	"os.setuid": pyProcCtl, "os.setgid": pyProcCtl, "os.seteuid": pyProcCtl, "os.setreuid": pyProcCtl, "os.abort": pyProcCtl,
	"multiprocessing.Process": pyProcCtl,
	"cffi.FFI":                pyNative,
	"pickle.loads":            pyDeser, "pickle.load": pyDeser, "pickle.Unpickler": pyDeser,
	"marshal.loads": pyDeser, "marshal.load": pyDeser, "shelve.open": pyDeser,
	"dill.loads": pyDeser, "dill.load": pyDeser, "jsonpickle.decode": pyDeser,
	"yaml.load": pyDeser, "yaml.unsafe_load": pyDeser, "yaml.full_load": pyDeser, "yaml.load_all": pyDeser,
	"os.remove": pyFileDelete, "os.unlink": pyFileDelete, "os.rmdir": pyFileDelete, "os.removedirs": pyFileDelete,
	"shutil.rmtree": pyFileDelete, "pathlib.Path().unlink": pyFileDelete, "pathlib.Path().rmdir": pyFileDelete,
	"os.mkdir": pyFileWrite, "os.makedirs": pyFileWrite, "os.rename": pyFileWrite, "os.renames": pyFileWrite,
	"os.replace": pyFileWrite, "os.symlink": pyFileWrite, "os.link": pyFileWrite, "os.truncate": pyFileWrite,
	"os.open": pyFileWrite, "os.write": pyFileWrite, "os.mkfifo": pyFileWrite,
	"shutil.copy": pyFileWrite, "shutil.copy2": pyFileWrite, "shutil.copyfile": pyFileWrite, "shutil.copytree": pyFileWrite,
	"shutil.move": pyFileWrite, "pathlib.Path().write_text": pyFileWrite, "pathlib.Path().write_bytes": pyFileWrite,
	"pathlib.Path().touch": pyFileWrite, "pathlib.Path().mkdir": pyFileWrite, "pathlib.Path().rename": pyFileWrite,
	"pathlib.Path().replace": pyFileWrite, "pathlib.Path().symlink_to": pyFileWrite,
	"os.chmod": pyFilePerm, "os.chown": pyFilePerm, "os.lchown": pyFilePerm, "os.fchmod": pyFilePerm,
	"shutil.chown": pyFilePerm, "pathlib.Path().chmod": pyFilePerm,
	"os.getenv": pyEnv, "os.environ.get": pyEnv, "os.putenv": pyEnv, "os.environ.copy": pyEnv,
}

// pyExactPrefixes are name families every call of which is covered by one
// rule: each name is the prefix followed by an identifier with no call in
// between (instances such as socket.socket().connect are not matched; the
// constructor call already was).
var pyPrefixes = []struct{ prefix, rule string }{
	{"os.exec", pyProc}, {"os.spawn", pyProc},
	{"subprocess.", pyProc}, {"_posixsubprocess.", pyProc},
	{"ctypes.", pyNative}, {"_ctypes.", pyNative},
	{"socket.", pyNet}, {"urllib.request.", pyNet}, {"urllib.urlopen", pyNet}, {"urllib2.", pyNet},
	{"requests.", pyNet}, {"httpx.", pyNet}, {"http.client.", pyNet}, {"aiohttp.", pyNet},
	{"ftplib.", pyNet}, {"smtplib.", pyNet}, {"telnetlib.", pyNet}, {"paramiko.", pyNet},
	{"urllib3.", pyNet}, {"xmlrpc.client.", pyNet}, {"websocket.", pyNet}, {"websockets.", pyNet},
	{"pycurl.", pyNet}, {"poplib.", pyNet}, {"imaplib.", pyNet}, {"ssl.", pyNet},
}

// pyModuleExports lists, for modules covered by a prefix, the names a
// wildcard import brings in that the rules care about.
var pyModuleExports = map[string][]string{
	"subprocess": {"run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput"},
	"ctypes":     {"CDLL", "cdll", "windll", "WinDLL", "PyDLL", "pydll", "cast", "memmove", "string_at", "pythonapi", "CFUNCTYPE"},
	"socket":     {"socket", "create_connection", "create_server", "socketpair", "fromfd"},
	"os": {"system", "popen", "execl", "execle", "execlp", "execlpe", "execv", "execve", "execvp", "execvpe",
		"spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "posix_spawn",
		"posix_spawnp", "fork", "kill", "remove", "unlink", "rmdir", "removedirs", "chmod", "chown", "getenv"},
	"pty":            {"spawn", "fork"},
	"pickle":         {"loads", "load", "Unpickler"},
	"marshal":        {"loads", "load"},
	"shutil":         {"rmtree", "move", "copy", "copy2", "copyfile", "copytree", "chown"},
	"urllib.request": {"urlopen", "urlretrieve", "Request", "build_opener"},
	"requests":       {"get", "post", "put", "delete", "patch", "head", "request", "Session"},
	"builtins":       {"eval", "exec", "compile", "__import__", "open", "getattr"},
	"importlib":      {"import_module"},
	"base64":         {"b64decode", "b32decode", "b16decode", "a85decode", "b85decode", "urlsafe_b64decode", "decodebytes", "standard_b64decode"},
	"codecs":         {"decode"},
	"binascii":       {"unhexlify", "a2b_base64", "a2b_hex"},
	"zlib":           {"decompress"},
}

// pyModuleAliases canonicalises a module's first component.
var pyModuleAliases = map[string]string{
	"__builtin__": "builtins", "__builtins__": "builtins", "posix": "os", "nt": "os",
	"cPickle": "pickle", "_pickle": "pickle", "pathlib2": "pathlib",
}

// pyPathClasses are the pathlib classes whose instances have the
// pathlib.Path() methods.
var pyPathClasses = map[string]bool{
	"pathlib.Path": true, "pathlib.PosixPath": true, "pathlib.WindowsPath": true, "pathlib.PurePath": true,
}

// pyRiskyModules are the modules whose import is reported (PY-IMPORT-001).
var pyRiskyModules = map[string]bool{
	"subprocess": true, "ctypes": true, "_ctypes": true, "cffi": true, "pty": true, "pickle": true, "marshal": true,
	"shelve": true, "dill": true, "socket": true, "os": true, "shutil": true, "importlib": true, "builtins": true,
	"runpy": true, "code": true, "_posixsubprocess": true, "requests": true, "urllib": true, "http": true,
	"paramiko": true, "telnetlib": true, "ftplib": true, "smtplib": true, "base64": true, "codecs": true,
	"multiprocessing": true,
}

// pyRunModules are the modules that exist to run processes or to load
// code chosen at run time: importing one at all is PY-IMPORT-003, as the
// QWED A2A code_guard blocks any mention of subprocess or importlib.
var pyRunModules = map[string]bool{
	"subprocess": true, "_posixsubprocess": true, "pty": true, "commands": true, "popen2": true,
	"runpy": true, "importlib": true,
}

// pyDataSubmodules are the submodules of a pyRunModules module that only
// read data (package metadata, resources): importing them is not
// PY-IMPORT-003.
var pyDataSubmodules = map[string]bool{"importlib.metadata": true, "importlib.resources": true}

// pyImportRuns reports whether importing the canonical name (a module, or
// a module's attribute for from-imports) binds something that exists to
// run processes or code: a module of pyRunModules (or a submodule not in
// pyDataSubmodules), or a callable whose call is a process or execution
// rule (os.system, builtins.eval, importlib.import_module).
func pyImportRuns(name string) bool {
	first, _, _ := strings.Cut(name, ".")
	if pyRunModules[first] {
		for sub := range pyDataSubmodules {
			if name == sub || strings.HasPrefix(name, sub+".") {
				return false
			}
		}
		return true
	}
	switch pyRuleFor(name) {
	case pyProc, pyExec, pyCompile:
		return true
	}
	return false
}

// pyDecoders are the functions whose result is decoded data.
var pyDecoders = map[string]bool{
	"base64.b64decode": true, "base64.b32decode": true, "base64.b16decode": true, "base64.a85decode": true,
	"base64.b85decode": true, "base64.urlsafe_b64decode": true, "base64.decodebytes": true, "base64.decodestring": true,
	"base64.standard_b64decode": true, "codecs.decode": true, "binascii.unhexlify": true, "binascii.a2b_hex": true,
	"binascii.a2b_base64": true, "bytes.fromhex": true, "bytearray.fromhex": true, "zlib.decompress": true,
	"gzip.decompress": true, "bz2.decompress": true, "lzma.decompress": true, "marshal.loads": true,
}

// pyIntrospection are attribute names used to escape sandboxes.
var pyIntrospection = map[string]bool{
	"__subclasses__": true, "__globals__": true, "__code__": true, "__closure__": true, "__mro__": true,
	"__bases__": true, "__base__": true, "f_globals": true, "f_builtins": true, "f_locals": true, "f_back": true,
	"gi_frame": true, "cr_frame": true, "tb_frame": true, "func_globals": true, "__reduce__": true,
	"__reduce_ex__": true, "__getattribute__": true, "__loader__": true, "__spec__": true,
}

// pyBuiltins are the builtin names the analyser resolves.
var pyBuiltins = map[string]bool{
	"eval": true, "exec": true, "execfile": true, "compile": true, "__import__": true, "open": true,
	"getattr": true, "setattr": true, "globals": true, "locals": true, "vars": true, "chr": true,
	"bytes": true, "bytearray": true, "str": true, "map": true, "breakpoint": true, "input": true,
}

// canonPy canonicalises a dotted name's first component.
func canonPy(name string) string {
	first, rest, has := strings.Cut(name, ".")
	if c, ok := pyModuleAliases[first]; ok {
		first = c
	}
	if has {
		name = first + "." + rest
	} else {
		name = first
	}
	if name == "importlib.__import__" {
		return "builtins.__import__"
	}
	for _, t := range []string{"builtins.bytes.", "builtins.bytearray.", "builtins.str."} {
		if strings.HasPrefix(name, t) {
			return strings.TrimPrefix(name, "builtins.")
		}
	}
	if name == "io.open" || name == "codecs.open" {
		return "builtins.open"
	}
	for cls := range pyPathClasses {
		if strings.HasPrefix(name, cls+"().") {
			return "pathlib.Path()." + strings.TrimPrefix(name, cls+"().")
		}
	}
	return name
}

// pyRuleFor returns the rule for calling a canonical name ("" for none).
func pyRuleFor(name string) string {
	if r, ok := pyCalls[name]; ok {
		return r
	}
	for _, p := range pyPrefixes {
		if rest, ok := strings.CutPrefix(name, p.prefix); ok && !strings.Contains(rest, "(") {
			return p.rule
		}
	}
	return ""
}
