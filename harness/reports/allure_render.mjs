// Renders Allure results into Allure 3's "awesome" report, as `allure awesome` does, from a
// process that can start before the results exist (harness/reports/allure_report.py: Renderer).
//
//   node allure_render.mjs ALLURE_ENTRY    (ALLURE_ENTRY: the allure package's dist/index.js)
//
// It loads Allure's modules first (most of the CLI's start-up: about 0.6 s of CPU), then reads
// one JSON line on stdin, {"results", "output", "name", "config"}, and renders exactly what
// the CLI's awesome command renders with --single-file (its code, without the CLI's other
// commands to load). End of input without a job: nothing to do, exit 0. Exit 3: this Allure
// is not one whose modules it knows (the caller runs the CLI instead).
//
// Two of Allure's readings are done here the quick way, to the same effect (issue 35: they were
// two thirds of a certify report's render, 0.6 of 0.9 s): see wholeFile and readResults.
import { createRequire } from "node:module";
import { readFileSync, readdirSync, realpathSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

let AllureReport, readConfig, AwesomePlugin, PathResultFile;
try {
  const require = createRequire(process.argv[2]);
  const core = require.resolve("@allurereport/core");
  ({ AllureReport, readConfig } = await import(pathToFileURL(core).href));
  // The class core reads every result and attachment file through (core's own copy).
  ({ PathResultFile } = await import(
    pathToFileURL(createRequire(core).resolve("@allurereport/reader-api")).href));
  ({ default: AwesomePlugin } = await import(
    pathToFileURL(require.resolve("@allurereport/plugin-awesome")).href));
} catch (error) {
  console.error(`allure_render: cannot load Allure 3's modules: ${error.message}`);
  process.exit(3);
}

// Allure reads each file through a stream, and the awesome plugin reads the attachments one
// after another: about 0.3 ms of thread-pool round trips each (1,810 attachments in a certify
// report: 0.55 s). The whole file at once, from the page cache, takes some 20 us; the bytes are
// the same, and a file gone is undefined, as it is to the stream reader.
function wholeFile(file) {
  try {
    return readFileSync(file.path);
  } catch (error) {
    if (error.code === "ENOENT") {
      return undefined;
    }
    throw error;
  }
}
PathResultFile.prototype.asBuffer = async function asBuffer() {
  return wholeFile(this);
};
PathResultFile.prototype.asUtf8String = async function asUtf8String() {
  return wholeFile(this)?.toString("utf-8");
};
PathResultFile.prototype.asJson = async function asJson() {
  const content = wholeFile(this);
  return content === undefined ? undefined : JSON.parse(content.toString("utf-8"));
};

// What AllureReport.readDirectory does with a results folder (the regular files, *.tmp left
// out, in name order, each as a PathResultFile at its real path; a file that cannot be read is
// said and skipped), without its asynchronous realpath of each file (60 ms for 1,927 files):
// a regular file's real path is its folder's real path and its name. (Its other step, reading
// an Xcode result bundle, does not apply: the folder holds Allure results.)
async function readResults(report, folder) {
  let names;
  try {
    names = readdirSync(folder, { withFileTypes: true })
      .filter((entry) => entry.isFile() && !entry.name.endsWith(".tmp"))
      .map((entry) => entry.name)
      .sort((a, b) => a.localeCompare(b));
  } catch (error) {
    console.error("can't read directory", error);
    return;
  }
  const real = realpathSync(folder);
  for (const name of names) {
    try {
      await report.readResult(new PathResultFile(join(real, name), name));
    } catch (error) {
      console.error(`can't read result file ${name}`, error);
    }
  }
}

let input = "";
for await (const chunk of process.stdin) {
  input += chunk;
}
if (!input.trim()) {
  process.exit(0);
}
const job = JSON.parse(input);
// What AwesomeCommand.execute does for `allure awesome RESULTS --output OUT --single-file
// --report-name NAME --config CONFIG`, run in this process's folder.
const config = await readConfig(await realpath(process.cwd()), job.config, {
  output: job.output,
  name: job.name,
  resolutions: { knownIssuesPath: undefined },
  historyPath: undefined,
  hideLabels: undefined,
});
const options = {
  singleFile: true,
  logo: undefined,
  theme: undefined,
  reportLanguage: undefined,
  groupBy: ["parentSuite", "suite", "subSuite"],
};
config.plugins = [
  { id: "awesome", enabled: true, options, plugin: new AwesomePlugin(options) },
];
const report = new AllureReport(config);
await report.start();
await readResults(report, job.results);
await report.done();
