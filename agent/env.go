package agent

import (
	"fmt"
	"os"
	"runtime"
	"strings"
)

// baseEnv names the variables of the parent's environment every [Command]
// passes on: what programs need to find their tools, files, locale and
// time zone, and nothing that grants access. Entries ending in "*" are
// prefixes. The Windows names are there because programs there fail
// without them.
var baseEnv = []string{
	"HOME", "LANG", "LANGUAGE", "LC_*", "LOGNAME", "PATH", "SHELL", "TMPDIR", "TZ", "USER",
	"XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
	"APPDATA", "COMSPEC", "LOCALAPPDATA", "PATHEXT", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "TMP", "USERPROFILE", "WINDIR",
}

// checkPassEnv refuses an entry of PassEnv that is neither a variable name
// nor a prefix ending in "*", so that a typo does not silently pass
// nothing, or everything.
func checkPassEnv(pass []string) error {
	for _, p := range pass {
		name := strings.TrimSuffix(p, "*")
		if strings.ContainsAny(name, "=*\x00") || (name == "" && p != "*") {
			return fmt.Errorf(`PassEnv entry %q is not a variable name, a prefix ending in "*", or "*"`, p)
		}
	}
	return nil
}

// environ is the environment of the program: the variables of the
// parent's that baseEnv or PassEnv name, then Env, whose entries win.
func (c *Command) environ() []string {
	parent := os.Environ()
	env := make([]string, 0, len(c.Env)+16)
	for _, kv := range parent {
		name, _, ok := strings.Cut(kv, "=")
		if ok && (matchEnv(baseEnv, name) || matchEnv(c.PassEnv, name)) {
			env = append(env, kv)
		}
	}
	return append(env, c.Env...)
}

// matchEnv reports whether one of patterns names the variable name.
// Windows spells variable names in any case.
func matchEnv(patterns []string, name string) bool {
	fold := runtime.GOOS == "windows"
	if fold {
		name = strings.ToUpper(name)
	}
	for _, p := range patterns {
		if fold {
			p = strings.ToUpper(p)
		}
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			if strings.HasPrefix(name, prefix) {
				return true
			}
		} else if name == p {
			return true
		}
	}
	return false
}
