package plan

import (
	"errors"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"

	"github.com/cshell/cshell/internal/escape"
)

// CheckName refuses names that cannot be told from ids or from "all",
// that would not print as themselves, or that are long. flag names the
// option in the sentence.
func CheckName(name, flag string) error {
	if name == "" {
		return nil
	}
	if _, err := strconv.Atoi(name); err == nil || strings.ContainsAny(name, " /") || escape.HasControl(name) ||
		strings.HasPrefix(name, "-") || name == "all" || len(name) > 64 || taskLike(name) {
		return usageErr("%s %q: a name has at most 64 characters, no spaces, slashes or control characters, does not start with -, and is neither a number, \"all\", nor shell-N or call-N (the MCP server's task ids)", flag, escape.Line(name))
	}
	return nil
}

// CheckSession refuses session names with slashes, control characters or
// dots alone, and long ones: a session name travels into records, notices
// and messages.
func CheckSession(s string) error {
	if s == "" || strings.Contains(s, "/") || escape.HasControl(s) || strings.Trim(s, ".") == "" || len(s) > 64 {
		return usageErr("session %q: a session name has 1 to 64 characters, none a slash or a control character, and is not only dots", escape.Line(s))
	}
	return nil
}

// taskLike reports whether name reads as an MCP task id (shell-N,
// call-N), which the MCP server takes for the task's shell.
func taskLike(name string) bool {
	for _, p := range []string{"shell-", "call-"} {
		if rest, ok := strings.CutPrefix(name, p); ok {
			if _, err := strconv.Atoi(rest); err == nil {
				return true
			}
		}
	}
	return false
}

// CompileRegexp compiles an RE2 expression given with option, or says
// in a sentence (of kind ErrUsage) why it is not one.
func CompileRegexp(option, expr string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		why := "it does not parse"
		var se *syntax.Error
		if errors.As(err, &se) {
			why = string(se.Code) // "missing closing )", without the expression again
		}
		return nil, usageErr("%s %q is not a valid regular expression (RE2): %s", option, expr, why)
	}
	return re, nil
}
