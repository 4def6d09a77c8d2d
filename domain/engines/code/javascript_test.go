package code

import "testing"

// TestSeed002_5_2_3_JavaScriptSecurity is the JavaScript table: eval, the
// Function constructor, child_process through require/import aliases,
// vm, fs, net/http, obfuscation and decoded payloads.
func TestSeed002_5_2_3_JavaScriptSecurity(t *testing.T) {
	runCodeCases(t, "javascript", []codeCase{
		{name: "eval of a variable", src: "eval(userInput);", block: true, want: []string{"JS-EXEC-001@1"}},
		{name: "new Function", src: "const f = new Function('a', body);\nf(1);", block: true, want: []string{"JS-EXEC-002@1"}},
		{name: "Function called", src: "Function('return process')()", block: true, want: []string{"JS-EXEC-002@1"}},
		{name: "constructor.constructor", src: "''.constructor.constructor('return this')()", block: true, want: []string{"JS-EXEC-002@1"}},
		{name: "setTimeout with a string", src: "setTimeout('alert(1)', 10);", block: true, want: []string{"JS-EXEC-001@1"}},
		{name: "setTimeout with a function", src: "setTimeout(() => tick(), 10);", block: false},
		{name: "require child_process", src: "const cp = require('child_process');\ncp.exec('ls');", block: true, want: []string{"JS-PROC-001@2", "JS-IMPORT-002@1"}},
		{name: "node: prefix and destructuring alias", src: "const { execSync: run } = require('node:child_process');\nrun('id');", block: true, want: []string{"JS-PROC-001@2"}},
		{name: "shorthand destructuring", src: "const { spawn } = require('child_process');\nspawn('sh');", block: true, want: []string{"JS-PROC-001@2"}},
		{name: "inline require", src: "require('child_process').execSync('id')", block: true, want: []string{"JS-PROC-001@1"}},
		{name: "import namespace", src: "import * as cp from 'child_process';\ncp.fork('x.js');", block: true, want: []string{"JS-PROC-001@2"}},
		{name: "import named alias", src: "import { exec as e } from 'child_process';\ne('id');", block: true, want: []string{"JS-PROC-001@2"}},
		{name: "dynamic import", src: "const cp = await import('child_process');\ncp.spawn('sh');", block: true, want: []string{"JS-PROC-001@2"}},
		{name: "require of a computed module", src: "require(name)", block: true, want: []string{"JS-EXEC-003@1"}},
		{name: "vm", src: "const vm = require('vm');\nvm.runInNewContext(code);", block: true, want: []string{"JS-EXEC-003@2"}},
		{name: "process.binding", src: "process.binding('spawn_sync')", block: true, want: []string{"JS-NATIVE-001@1"}},
		{name: "globalThis eval concatenated", src: "globalThis['ev' + 'al'](x)", block: true, want: []string{"JS-OBF-001@1", "JS-EXEC-001@1"}},
		{name: "window eval", src: "window.eval(x)", block: true, want: []string{"JS-EXEC-001@1"}},
		{name: "reversed name", src: "const n = 'lave'.split('').reverse().join('');\nglobalThis[n](x);", block: true, want: []string{"JS-EXEC-001@2"}},
		{name: "fromCharCode name", src: "this[String.fromCharCode(101, 118, 97, 108)](x)", block: true, want: []string{"JS-EXEC-001@1"}},
		{name: "computed lookup on global", src: "globalThis[k](x)", block: true, want: []string{"JS-OBF-001@1"}},
		{name: "atob payload", src: "eval(atob(p))", block: true, want: []string{"JS-OBF-002@1"}},
		{name: "Buffer base64 payload analysed", src: "eval(Buffer.from('cmVxdWlyZSgiY2hpbGRfcHJvY2VzcyIpLmV4ZWNTeW5jKCJpZCIp', 'base64').toString())", block: true, want: []string{"JS-OBF-002@1", "JS-PROC-001@1"}},
		{name: "eval of constant", src: "eval('1 + 1')", block: true, want: []string{"JS-EXEC-004@1"}, not: []string{"JS-EXEC-001"}},
		{name: "eval alias", src: "const e = eval;\ne(x);", block: true, want: []string{"JS-EXEC-001@2"}},
		{name: "exec passed as callback", src: "const cp = require('child_process');\ncmds.forEach(cp.execSync);", block: true, want: []string{"JS-PROC-001@2"}},
		{name: "fs write", src: "const fs = require('fs');\nfs.writeFileSync('out.txt', data);", block: false, want: []string{"JS-FILE-001@2"}},
		{name: "fs unlink", src: "const fs = require('fs');\nfs.unlinkSync('a.txt');", block: true, want: []string{"JS-FILE-002@2"}},
		{name: "fs rm root", src: "import fs from 'fs';\nfs.rmSync('/', { recursive: true });", block: true, want: []string{"JS-FILE-002@2"}},
		{name: "fs promises", src: "const fs = require('fs/promises');\nawait fs.writeFile('a', b);", block: false, want: []string{"JS-FILE-001@2"}},
		{name: "read of ssh key", src: "const fs = require('fs');\nfs.readFileSync('/root/.ssh/id_rsa');", block: true, want: []string{"JS-FILE-004@2"}},
		{name: "http request", src: "const https = require('https');\nhttps.get('https://x');", block: false, want: []string{"JS-NET-001@2"}},
		{name: "net socket", src: "const net = require('net');\nconst s = net.connect(4444, '1.2.3.4');", block: false, want: []string{"JS-NET-001@2"}},
		{name: "fetch", src: "fetch('https://x/api')", block: false, want: []string{"JS-NET-001@1"}},
		{name: "innerHTML", src: "el.innerHTML = userHtml;", block: false, want: []string{"JS-DOM-001@1"}},
		{name: "process.env", src: "const k = process.env.API_KEY;", block: false, want: []string{"JS-ENV-001@1"}},
		{name: "plain code", src: "const xs = [1, 2, 3].map(x => x * 2);\nconsole.log(JSON.stringify(xs));", block: false, not: []string{"JS-EXEC-001"}},
		{name: "own exec method", src: "const re = /a/;\nre.exec('abc');", block: false},
		{name: "while true without break", src: "while (true) { work(); }", block: false, want: []string{"JS-QUAL-001@1"}},
	})
}
