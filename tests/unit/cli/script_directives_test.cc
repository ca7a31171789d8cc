// Directives in batch scripts: #GPUSCHED lines (any submit option) and the
// #SBATCH options gpusched honours, read from the top of a --script, with
// the command line winning; `status JOB` shows where each option came from.
#include "cli/script_directives.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "test_context.h"

using namespace gpusched;
using namespace gpusched::cli;
using namespace gpusched::cli::testing;

namespace {

std::vector<std::vector<std::string>> WordsOf(absl::string_view script) {
  auto lines = ReadScriptDirectives(script, "job.sh");
  REQUIRE(lines.ok());
  std::vector<std::vector<std::string>> out;
  for (const DirectiveLine& line : *lines) out.push_back(line.words);
  return out;
}

std::string ErrorOf(absl::string_view script) {
  auto lines = ReadScriptDirectives(script, "job.sh");
  REQUIRE_FALSE(lines.ok());
  return std::string(lines.status().message());
}

// A script in a fresh directory, submitted from there.
struct ScriptDir {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("gpusched-directives-" + std::to_string(getpid()));
  ScriptDir() { std::filesystem::create_directories(dir); }
  ~ScriptDir() { std::filesystem::remove_all(dir); }
  void Write(const std::string& name, const std::string& text) const { std::ofstream(dir / name) << text; }
};

}  // namespace

TEST_CASE("directives are the comment lines at the top of a script, up to its first command") {
  CHECK(WordsOf("#!/bin/bash\n"
                "# a plain comment\n"
                "\n"
                "#GPUSCHED --gpus 8 --time 2:00:00\n"
                "#SBATCH --job-name=train  # trailing comment\n"
                "#SBATCHX --gpus 1\n"
                "python train.py\n"
                "#SBATCH --gpus 4\n") ==
        std::vector<std::vector<std::string>>{{"--gpus", "8", "--time", "2:00:00"}, {"--name", "train"}});
  // Quotes keep words together, as in a shell.
  CHECK(WordsOf("#GPUSCHED --name 'two words' --env \"A=b c\"\n") ==
        std::vector<std::vector<std::string>>{{"--name", "two words", "--env", "A=b c"}});
}

TEST_CASE("the sbatch options gpusched can honour become their gpusched equivalents") {
  CHECK(WordsOf("#SBATCH -N 2 --gpus-per-node=h100:8 -t 1-00:00:00 -p long -a 0-9%2 -d afterok:12:13 -J sweep\n"
                "#SBATCH --gpus 4 -A team --hold -D /scratch\n#SBATCH -o slurm-%j.out -e slurm-%j.err\n"
                "#SBATCH --error=err.txt\n") ==
        std::vector<std::vector<std::string>>{
            {"--nodes", "2", "--gpus-per-node", "8", "--gpu-model", "h100", "--time", "1-00:00:00", "--queue", "long",
             "--array", "0-9%2", "--dependency", "afterok:12:13", "--name", "sweep"},
            {"--gpus", "4", "--account", "team", "--hold", "--workdir", "/scratch"},
            {"--output", "slurm-%j.out", "--error", "slurm-%j.err"},
            {"--error", "err.txt"}});
}

TEST_CASE("what gpusched cannot honour is refused, naming the line and saying why") {
  CHECK(ErrorOf("#!/bin/sh\n#SBATCH --gpus 1\n#SBATCH --mem-per-cpu=4G\n") ==
        "job.sh:3: #SBATCH --mem-per-cpu is not honoured by gpusched: it reads only " +
            std::string(kHonouredSbatchOptions) + "; use a #GPUSCHED line for the others");
  CHECK_THAT(ErrorOf("#SBATCH --gres=gpu:8\n"), Catch::Contains("--gpus or --gpus-per-node"));
  CHECK_THAT(ErrorOf("#SBATCH --nodes=2-4\n"), Catch::Contains("exact node count"));
  CHECK_THAT(ErrorOf("#SBATCH -p a,b\n"), Catch::Contains("one queue"));
  CHECK_THAT(ErrorOf("#SBATCH -d afterok:1?afterok:2\n"), Catch::Contains("neither ?"));
  CHECK_THAT(ErrorOf("#SBATCH --time\n"), Catch::Contains("job.sh:1: #SBATCH --time needs a value"));
  CHECK_THAT(ErrorOf("#SBATCH gpus=8\n"), Catch::Contains("is not an option"));
  CHECK_THAT(ErrorOf("#GPUSCHED --name 'open\n"), Catch::Contains("job.sh:1: #GPUSCHED: a quote is not closed"));
  CHECK_THAT(ErrorOf("#GPUSCHED --script other.sh\n"), Catch::Contains("belongs on the command line"));
  CHECK_THAT(ErrorOf("#GPUSCHED python x.py\n"), Catch::Contains("the script is the command"));
}

TEST_CASE("submit --script takes the script's options, the command line wins, and the job says where each came from") {
  ScriptDir d;
  d.Write("train.sh",
          "#!/bin/bash\n"
          "#SBATCH --gpus=h100:8\n"
          "#SBATCH --time=1:00:00 --job-name=train\n"
          "#GPUSCHED --env A=1 --env B=2 --preflight\n"
          "torchrun train.py\n");
  FakeHost host;
  host.cwd = d.dir.string();
  FakeSchedulerClient client;
  Invocation run = RunGpusched({"submit", "--time", "4:00:00", "--script", "train.sh"}, client, host);
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  REQUIRE(client.submits.size() == 1);
  const v1::JobSpec& spec = client.submits[0].spec();
  CHECK(spec.resources().gpus() == 8);
  CHECK(spec.resources().gpu_model() == "h100");
  CHECK(spec.time_limit_s() == 4 * 3600);  // the command line's
  CHECK(spec.name() == "train");
  CHECK(spec.env().at("A") == "1");
  CHECK(spec.env().at("B") == "2");
  CHECK(spec.preflight());
  CHECK(spec.script() ==
        "#!/bin/bash\n#SBATCH --gpus=h100:8\n#SBATCH --time=1:00:00 --job-name=train\n"
        "#GPUSCHED --env A=1 --env B=2 --preflight\ntorchrun train.py\n");

  std::map<std::string, std::pair<std::string, std::string>> sources;  // option -> (value, origin)
  for (const v1::OptionSource& s : spec.option_sources()) sources[s.option()] = {s.value(), s.origin()};
  CHECK(sources["--time"] == std::pair<std::string, std::string>{"4:00:00", "command line"});
  CHECK(sources["--gpus"] == std::pair<std::string, std::string>{"8", "script line 2: #SBATCH --gpus=h100:8"});
  CHECK(sources["--gpu-model"].second == "script line 2: #SBATCH --gpus=h100:8");
  CHECK(sources["--name"] ==
        std::pair<std::string, std::string>{"train", "script line 3: #SBATCH --time=1:00:00 --job-name=train"});
  CHECK(sources["--env"].first == "A=1 B=2");
  CHECK(sources["--preflight"] ==
        std::pair<std::string, std::string>{"", "script line 4: #GPUSCHED --env A=1 --env B=2 --preflight"});
  CHECK_FALSE(sources.contains("--script"));
}

TEST_CASE("a script's bad directive fails the submit with the line, and nothing is sent") {
  ScriptDir d;
  d.Write("bad.sh", "#!/bin/bash\n#GPUSCHED --gpus 2\n#GPUSCHED --gpus-typo 3\necho\n");
  d.Write("unhonoured.sh", "#!/bin/bash\n#SBATCH --exclusive\necho\n");
  FakeHost host;
  host.cwd = d.dir.string();
  FakeSchedulerClient client;
  Invocation run = RunGpusched({"submit", "--script", "bad.sh"}, client, host);
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Catch::StartsWith("gpusched: " + (d.dir / "bad.sh").string() + ":3: "));
  CHECK_THAT(run.err, Catch::Contains("--gpus-typo"));
  run = RunGpusched({"submit", "--script", "unhonoured.sh"}, client, host);
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Catch::Contains(":2: #SBATCH --exclusive is not honoured by gpusched"));
  // A bad value is refused as the command line's would be.
  d.Write("badvalue.sh", "#SBATCH --gpus=eight\necho\n");
  run = RunGpusched({"submit", "--script", "badvalue.sh"}, client, host);
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Catch::Contains("badvalue.sh:1: invalid --gpus \"eight\""));
  CHECK(client.submits.empty());
}

TEST_CASE("any bytes at all are read without harm: a binary file, a huge line, CRLF endings") {
  std::string binary;
  for (int i = 0; i < 4096; ++i) binary += static_cast<char>((i * 131) % 256);
  (void)ReadScriptDirectives(binary, "blob");  // an answer, either way
  CHECK(ReadScriptDirectives("#GPUSCHED --name " + std::string(1 << 20, 'x') + "\n", "big.sh").ok());
  auto crlf = ReadScriptDirectives("#!/bin/sh\r\n#SBATCH --gpus=2\r\necho\r\n", "dos.sh");
  REQUIRE(crlf.ok());
  REQUIRE(crlf->size() == 1);
  CHECK(crlf->front().words == std::vector<std::string>{"--gpus", "2"});
  // The origin kept with the job stays short whatever the line.
  auto long_line = ReadScriptDirectives("#GPUSCHED --name " + std::string(5000, 'y') + "\n", "long.sh");
  REQUIRE(long_line.ok());
  CHECK(long_line->front().origin.size() < 200);
}
