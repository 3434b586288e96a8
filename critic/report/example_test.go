package report_test

import (
	"fmt"
	"os"

	"github.com/dagent-dev/dagent/critic"
	"github.com/dagent-dev/dagent/critic/report"
)

// plans are two plan files as a service might receive them: one fine, one
// naming an agent nobody defined.
var plans = []struct{ path, source string }{
	{"plans/ok.json", `{"tasks": [{"id": "draft", "input": "Write an outline."}]}`},
	{"plans/ghost.json", `{"tasks": [
  {"id": "draft", "agent": "ghost", "input": "Write an outline."}
]}`},
}

// reviewed reviews the plans.
func reviewed() []report.File {
	var files []report.File
	for _, p := range plans {
		files = append(files, report.File{Path: p.path, Report: critic.ReviewSource([]byte(p.source))})
	}
	return files
}

func ExampleWrite() {
	if err := report.Write(os.Stdout, report.Text, reviewed(), report.Options{}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// plans/ok.json: score 10/10. The plan looks good: no issues found.
	//
	// plans/ghost.json: score 7/10. The plan cannot run as written; fix its critical issues first.
	//   task draft
	//     2:3  critical  unknown_agent  agent: agent "ghost" is not defined in the plan's agents and is not a registry worker
	//                                   Define the agent in the plan's agents, name a registry worker, or use "default".
	//
	// 2 files, 1 critical, 0 warnings, 0 info
}

func ExampleWrite_json() {
	if err := report.Write(os.Stdout, report.JSON, reviewed()[1:], report.Options{}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {
	//   "version": 1,
	//   "files": [
	//     {
	//       "path": "plans/ghost.json",
	//       "score": 7,
	//       "summary": "The plan cannot run as written; fix its critical issues first.",
	//       "issues": [
	//         {
	//           "check": "unknown_agent",
	//           "severity": "critical",
	//           "task_id": "draft",
	//           "field": "agent",
	//           "message": "agent \"ghost\" is not defined in the plan's agents and is not a registry worker",
	//           "recommendation": "Define the agent in the plan's agents, name a registry worker, or use \"default\".",
	//           "line": 2,
	//           "column": 3
	//         }
	//       ],
	//       "recommendations": [
	//         "Define the agent in the plan's agents, name a registry worker, or use \"default\"."
	//       ]
	//     }
	//   ]
	// }
}

func ExampleWrite_gitHub() {
	if err := report.Write(os.Stdout, report.GitHub, reviewed(), report.Options{}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// ::error file=plans/ghost.json,line=2,col=3,title=unknown_agent::task draft: agent: agent "ghost" is not defined in the plan's agents and is not a registry worker%0ADefine the agent in the plan's agents, name a registry worker, or use "default".
}

func ExampleWrite_sarif() {
	opts := report.Options{Tool: report.Tool{Name: "plan-checker", Version: "1.4.0", InformationURI: "https://example.com/plan-checker"}}
	if err := report.Write(os.Stdout, report.SARIF, reviewed(), opts); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {
	//   "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
	//   "version": "2.1.0",
	//   "runs": [
	//     {
	//       "tool": {
	//         "driver": {
	//           "name": "plan-checker",
	//           "informationUri": "https://example.com/plan-checker",
	//           "version": "1.4.0",
	//           "rules": [
	//             {
	//               "id": "unknown_agent",
	//               "shortDescription": {
	//                 "text": "The task's agent is not defined"
	//               },
	//               "fullDescription": {
	//                 "text": "The task names an agent that the plan's agents do not define, that is not \"default\", and that is not a worker of the registry, so nothing could run the task."
	//               },
	//               "help": {
	//                 "text": "The task names an agent that the plan's agents do not define, that is not \"default\", and that is not a worker of the registry, so nothing could run the task.\n\nFix: Define the agent in the plan's agents, name a registry worker, or use \"default\".",
	//                 "markdown": "**The task's agent is not defined**\n\nThe task names an agent that the plan's agents do not define, that is not \"default\", and that is not a worker of the registry, so nothing could run the task.\n\n**Fix:** Define the agent in the plan's agents, name a registry worker, or use \"default\"."
	//               },
	//               "defaultConfiguration": {
	//                 "level": "error"
	//               },
	//               "properties": {
	//                 "tags": [
	//                   "dagent",
	//                   "plan",
	//                   "structure"
	//                 ]
	//               }
	//             }
	//           ]
	//         }
	//       },
	//       "columnKind": "unicodeCodePoints",
	//       "results": [
	//         {
	//           "ruleId": "unknown_agent",
	//           "ruleIndex": 0,
	//           "level": "error",
	//           "message": {
	//             "text": "task draft: agent: agent \"ghost\" is not defined in the plan's agents and is not a registry worker\nDefine the agent in the plan's agents, name a registry worker, or use \"default\"."
	//           },
	//           "locations": [
	//             {
	//               "physicalLocation": {
	//                 "artifactLocation": {
	//                   "uri": "plans/ghost.json"
	//                 },
	//                 "region": {
	//                   "startLine": 2,
	//                   "startColumn": 3
	//                 }
	//               }
	//             }
	//           ],
	//           "partialFingerprints": {
	//             "dagentIssueHash/v1": "7715af607982d5fab3bf976f861c7363"
	//           }
	//         }
	//       ]
	//     }
	//   ]
	// }
}

func ExampleParseFormat() {
	for _, name := range []string{"sarif", "xml"} {
		f, err := report.ParseFormat(name)
		fmt.Printf("%q %v\n", f, err)
	}
	// Output:
	// "sarif" <nil>
	// "" unknown format "xml": use text, json, sarif or github
}
