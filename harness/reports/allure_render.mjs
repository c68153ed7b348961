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
import { createRequire } from "node:module";
import { realpath } from "node:fs/promises";
import { pathToFileURL } from "node:url";

let AllureReport, readConfig, AwesomePlugin;
try {
  const require = createRequire(process.argv[2]);
  ({ AllureReport, readConfig } = await import(
    pathToFileURL(require.resolve("@allurereport/core")).href));
  ({ default: AwesomePlugin } = await import(
    pathToFileURL(require.resolve("@allurereport/plugin-awesome")).href));
} catch (error) {
  console.error(`allure_render: cannot load Allure 3's modules: ${error.message}`);
  process.exit(3);
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
await report.readDirectory(job.results);
await report.done();
