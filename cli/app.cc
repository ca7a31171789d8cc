// The one place that includes CLI11: the command-line surface of `gpusched`.
// Flags are collected as text into each command's options struct; parsing the
// values is the commands' business, so that their errors name the flag.
#include "cli/app.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <functional>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/address.h"
#include "cli/cancel_command.h"
#include "cli/errors.h"
#include "cli/history_command.h"
#include "cli/logs_command.h"
#include "cli/nodes_command.h"
#include "cli/pools_command.h"
#include "cli/script_directives.h"
#include "cli/session_command.h"
#include "cli/status_command.h"
#include "cli/submit_command.h"
#include "cli/submit_request.h"
#include "cli/tls_settings.h"
#include "common/defaults.h"

namespace gpusched::cli {
namespace {

CLI::Option* AddText(CLI::App* app, const std::string& name, std::optional<std::string>* target,
                     const std::string& type, const std::string& help) {
  return app
      ->add_option_function<std::string>(
          name, [target](const std::string& value) { *target = value; }, help)
      ->type_name(type);
}

// One value per occurrence, so that `--env A=1 python x.py` does not take
// `python` as a second --env.
CLI::Option* AddRepeated(CLI::App* app, const std::string& name, std::vector<std::string>* target,
                         const std::string& type, const std::string& help) {
  return app->add_option(name, *target, help)->type_name(type)->allow_extra_args(false);
}

struct Commands {
  SubmitOptions submit;
  SubmitOptions run;
  SubmitOptions alloc;
  StatusOptions status;
  HistoryOptions history;
  CancelOptions hold;
  CancelOptions release;
  CancelOptions cancel;
  LogsOptions logs;
  NodesOptions nodes;
  PoolsOptions pools;
};

using Runner = std::function<absl::StatusOr<int>(CommandContext&)>;

// The first word of a command line that is neither an option of `app` nor
// the value of one: the command's name, when it names one.
std::string FirstWord(const CLI::App& app, const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word.empty() || word[0] != '-') return word;
    const CLI::Option* option = app.get_option_no_throw(word);
    if (option != nullptr && option->get_type_size() != 0) ++i;  // --addr HOST:PORT
  }
  return "";
}

// The options of a job's request, shared by submit, run and alloc.
CLI::App* AddSubmitOptions(CLI::App* sub, SubmitOptions& o);

CLI::App* DefineSubmit(CLI::App& app, SubmitOptions& o) {
  return AddSubmitOptions(app.add_subcommand("submit", "Submit a job: gpusched submit [OPTIONS] -- CMD ARGS..."), o);
}

CLI::App* DefineRun(CLI::App& app, SubmitOptions& o) {
  return AddSubmitOptions(
      app.add_subcommand("run",
                         "Run a command on GPUs of its own, attached to this terminal (waits for them; inside "
                         "`gpusched alloc`, on that allocation): gpusched run [OPTIONS] -- CMD ARGS..."),
      o);
}

CLI::App* DefineAlloc(CLI::App& app, SubmitOptions& o) {
  return AddSubmitOptions(
      app.add_subcommand("alloc",
                         "Hold GPUs and open a shell here (or run -- CMD) in which `gpusched run` uses them; "
                         "leaving it gives them back"),
      o);
}

CLI::App* AddSubmitOptions(CLI::App* sub, SubmitOptions& o) {
  sub->add_option("CMD", o.command, "The command and its arguments (after --)")->type_name("");
  // Everything after the first word of the command belongs to the command.
  sub->positionals_at_end();
  AddText(sub, "--script", &o.script_path, "FILE",
          "Run this script (read now, sent with the job) instead of a command");
  AddText(sub, "--gpus", &o.gpus, "N", "Total GPUs of the gang");
  AddText(sub, "--nodes", &o.nodes, "N", "Exact number of nodes (with --gpus-per-node)");
  AddText(sub, "--gpus-per-node", &o.gpus_per_node, "N", "GPUs on each node (with --nodes)");
  AddText(sub, "--cpus-per-gpu", &o.cpus_per_gpu, "N", "CPUs for each GPU");
  AddText(sub, "--mem-per-gpu", &o.mem_per_gpu, "SIZE", "Host memory for each GPU: 512M, 16G; a plain number is MB");
  AddText(sub, "--cpus", &o.cpus, "N", "CPUs of a CPU-only job");
  AddText(sub, "--mem", &o.mem, "SIZE", "Memory of a CPU-only job: 512M, 16G; a plain number is MB");
  AddText(sub, "--gpu-model", &o.gpu_model, "TEXT", "Only GPUs whose model contains TEXT (H100, A100-SXM4-80GB)");
  AddText(sub, "--gpu-mem", &o.gpu_mem, "SIZE", "Only GPUs with at least this much memory each: 80G");
  AddText(sub, "--gpu-share", &o.gpu_share, "PERCENT",
          "A share of each GPU instead of the whole GPU, on GPUs their node shares: 30%. With --gpus N, N distinct "
          "GPUs of one node (default 1)");
  AddText(sub, "--gpu-mem-limit", &o.gpu_mem_limit, "SIZE",
          "With --gpu-share: the GPU memory held on each of its GPUs, 10G (default: the same share of the GPU's "
          "memory)");
  AddText(sub, "--gpu-sharing", &o.gpu_sharing, "HOW",
          "With --gpu-share: only GPUs shared this way, mps (the share and memory limit are enforced) or "
          "timeslice (accounted, not enforced); default either");
  AddText(sub, "--mig", &o.mig, "PROFILE",
          "MIG instances of this profile instead of whole GPUs: 3g.40gb. With --gpus N, N instances of one node "
          "(default 1)");
  AddText(sub, "--topology", &o.topology, "MODE",
          "prefer (default: the best placement free now), strict (wait for the ideal one) or any");
  AddText(sub, "--topology-wait", &o.topology_wait, "LIMIT",
          "With strict: take the best free placement after waiting this long (Slurm time notation)");
  AddText(sub, "--time", &o.time, "LIMIT", "Time limit, as in Slurm: 90 (minutes), 1:30:00, 2-00:00:00");
  AddText(sub, "--name", &o.name, "NAME", "Job name");
  AddText(sub, "--queue", &o.queue, "QUEUE", "Queue to submit to");
  AddText(sub, "--priority", &o.priority, "N", "Points added to the job's priority (see `status JOB`)");
  AddText(sub, "--dependency,-d", &o.dependency, "LIST",
          "Start only after other jobs, as in Slurm: afterok:12:13,afterany:14 (after, afterok, afternotok, "
          "afterany); a dependency that can no longer be met cancels this job");
  AddText(sub, "--array", &o.array, "INDICES",
          "A job array: one task per index, as in Slurm: 0-99, 1,3,5, 0-30:10; %N runs at most N at once "
          "(0-99%8). Each task sees its index in GPUSCHED_ARRAY_TASK_ID");
  sub->add_flag("--hold", o.hold, "Submit held: it waits until `gpusched release JOB`");
  sub->add_flag("--preflight", o.preflight,
                "Before starting, run an NCCL all-reduce on the GPUs given; a node below the daemon's threshold is "
                "drained and the job goes back to the queue");
  sub->add_flag("--no-spot", o.no_spot,
                "Never run on spot nodes (a pool of class spot, which the cloud may take back at a short notice)");
  AddText(sub, "--account", &o.account, "NAME", "Account (team, project) charged for fair share; default: the user");
  AddText(sub, "--requeue", &o.requeue, "yes|no",
          "On a node failure: back to the queue (yes) or end NODE_FAIL (no); default: the queue's setting");
  AddRepeated(sub, "--env", &o.env, "K=V", "Set K=V for the job; K alone copies K from here (repeatable)");
  AddText(sub, "--workdir", &o.workdir, "DIR", "Working directory of the job (default: the current one)");
  AddText(sub, "--image", &o.image, "IMAGE",
          "Run every rank inside this container image (nvcr.io/nvidia/pytorch:24.05-py3), with its GPUs and the "
          "node's network, as you");
  AddRepeated(sub, "--mount", &o.mounts, "SRC:DST[:ro]",
              "With --image: make host path SRC visible at DST in the container, read-only with :ro (repeatable; "
              "the nodes allow some paths only)");
  AddText(sub, "--image-workdir", &o.image_workdir, "DIR",
          "With --image: the ranks' directory inside the container "
          "(default: the image's)");
  AddText(sub, "--output,-o", &o.output, "FILE",
          "Rank 0's stdout and stderr go to FILE on its node instead of its rank log, as sbatch's --output "
          "(relative: to the workdir; %j job id, %x name, %u user)");
  AddText(sub, "--error,-e", &o.error, "FILE",
          "Rank 0's stderr goes to FILE instead, as sbatch's --error (its stdout to --output, else its rank log)");
  AddText(sub, "--launch", &o.launch, "MODE", "per-gpu (one process per GPU, default) or per-node");
  AddText(sub, "--request-id", &o.request_id, "ID", "Idempotency key: resubmitting with it returns the first job");
  sub->add_flag("--wait", o.wait,
                "Block until the job (every task of an array) ends; exit 0 only if it (each of them) COMPLETED");
  sub->add_flag("--json", o.json, "Print the SubmitJobResponse as JSON");
  return sub;
}

CLI::App* DefineStatus(CLI::App& app, StatusOptions& o) {
  CLI::App* sub = app.add_subcommand("status", "Show the job list, or one job in detail");
  AddText(sub, "JOB", &o.job, "", "Show this job in detail");
  auto* all = sub->add_flag("--all,-a", o.all, "List every job, ended ones too");
  AddRepeated(sub, "--state", &o.states, "STATE", "List jobs in this state (repeatable)")->excludes(all);
  AddText(sub, "--user,-u", &o.user, "USER", "List this user's jobs");
  AddText(sub, "--queue,-q", &o.queue, "QUEUE", "List this queue's jobs");
  sub->add_flag("--json", o.json, "Print the Job, or {\"jobs\":[...]}, as JSON");
  return sub;
}

CLI::App* DefineHistory(CLI::App& app, HistoryOptions& o) {
  CLI::App* sub = app.add_subcommand("history", "Finished jobs with their wait, run time and GPU-hours");
  AddText(sub, "--user,-u", &o.user, "USER", "Only this user's jobs");
  AddText(sub, "--queue,-q", &o.queue, "QUEUE", "Only this queue's jobs");
  AddRepeated(sub, "--state", &o.states, "STATE", "Only jobs that ended in this state (repeatable)");
  AddText(sub, "--since", &o.since, "AGO", "Only jobs that ended within this long, e.g. 1-00:00:00 (Slurm notation)");
  sub->add_option("--limit", o.limit, "The most recently ended N jobs (0 = all)")->capture_default_str();
  sub->add_flag("--json", o.json, "Print {\"jobs\":[...], \"gpu_hours\": total} as JSON");
  return sub;
}

CLI::App* DefineJobList(CLI::App& app, const char* name, const char* what, CancelOptions& o) {
  CLI::App* sub = app.add_subcommand(name, what);
  sub->add_option("JOB", o.jobs, "Jobs")->type_name("")->required();
  sub->add_flag("--json", o.json, "Print each job as the daemon answered, one JSON line (a Job) per job");
  return sub;
}

CLI::App* DefineLogs(CLI::App& app, LogsOptions& o) {
  CLI::App* sub = app.add_subcommand("logs", "Print a rank's output (stdout and stderr)");
  sub->add_option("JOB", o.job, "The job")->type_name("")->required();
  AddText(sub, "--rank,-r", &o.rank, "R", "Global rank whose log to print (default 0)");
  sub->add_flag("--follow,-f", o.follow, "Keep printing new output until the job ends");
  return sub;
}

CLI::App* DefinePools(CLI::App& app, PoolsOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "pools", "Show the elastic node pools: class, nodes by power state, GPUs paid and used, cost per hour, demand");
  sub->add_flag("--json", o.json, "Print the ListPoolsResponse as JSON");
  return sub;
}

CLI::App* DefineNodes(CLI::App& app, NodesOptions& o) {
  CLI::App* sub = app.add_subcommand("nodes", "Show the cluster's nodes");
  sub->add_flag("--json", o.json, "Print the ListNodesResponse as JSON");
  CLI::App* show = sub->add_subcommand("show", "Show one node: GPUs, NICs and how they are wired");
  show->add_option("NODE", o.show, "The node")->type_name("")->required();
  show->add_flag("--json", o.json, "Print the Node as JSON");
  CLI::App* drain = sub->add_subcommand("drain", "Let no new job go to a node; its running jobs finish");
  drain->add_option("NODE", o.drain, "The node")->type_name("")->required();
  drain->add_option("--reason", o.reason, "Why (shown in gpusched nodes until resumed)")->type_name("TEXT")->required();
  drain->add_flag("--json", o.json, "Print the Node as JSON");
  CLI::App* probe = sub->add_subcommand(
      "probe", "Measure a node's GPU links with NCCL now; it takes no new job until the figures are in");
  probe->add_option("NODE", o.probe, "The node (idle: drain it and let its jobs end first)")->type_name("")->required();
  probe->add_flag("--wait", o.wait, "Wait for the figures and print them");
  probe->add_flag("--json", o.json, "Print the Node as JSON");
  CLI::App* interrupt = sub->add_subcommand(
      "interrupt", "A spot interruption: the node is taken back after a notice; its jobs are told and requeued");
  interrupt->add_option("NODE", o.interrupt, "The node")->type_name("")->required();
  interrupt->add_option("--in", o.notice, "Until it is taken back: 120s, 2m, or seconds (default 120s)")
      ->type_name("DURATION");
  interrupt->add_option("--reason", o.reason, "Shown with the drain (the cloud's notice id, say)")->type_name("TEXT");
  interrupt->add_flag("--json", o.json, "Print the Node as JSON");
  CLI::App* resume = sub->add_subcommand("resume", "Let new jobs go to a drained node again");
  resume->add_option("NODE", o.resume, "The node")->type_name("")->required();
  resume->add_flag("--json", o.json, "Print the Node as JSON");
  return sub;
}

// An option's value as given; "" for a flag, which has none.
std::string ShownValue(const CLI::Option& option) {
  return option.get_items_expected_max() == 0 ? "" : absl::StrJoin(option.results(), " ");
}

// A --script's directives (script_directives.h) as if typed before the
// command line's options: each line is parsed by the same definitions as
// the command line, and only options the command line left out are taken.
// Records where each of the job's options came from.
absl::Status ApplyScriptDirectives(CLI::App* submit, SubmitOptions& o, const LocalContext& ctx) {
  const std::string path = AbsolutePath(ctx, *o.script_path);
  auto text = ReadScript(path);
  if (!text.ok()) return text.status();
  auto lines = ReadScriptDirectives(*text, path);
  if (!lines.ok()) return lines.status();
  o.script_text = *std::move(text);

  for (const CLI::Option* given : submit->get_options()) {
    const std::string name = given->get_name();
    // --wait is about this invocation too, but a script may ask for it.
    if (given->count() == 0 || name.empty() || OnlyOnCommandLine(name) || name == "--wait" || given->get_positional()) {
      continue;
    }
    o.sources.push_back({name, ShownValue(*given), "command line"});
  }
  struct FromScript {
    std::vector<std::string> results;
    std::string origin;
  };
  std::vector<std::pair<std::string, FromScript>> taken;  // in the script's order; a later line wins
  for (const DirectiveLine& line : *lines) {
    CLI::App line_app;
    SubmitOptions scratch;
    CLI::App* parsed = DefineSubmit(line_app, scratch);
    std::vector<std::string> words = {"submit"};
    words.insert(words.end(), line.words.begin(), line.words.end());
    try {
      std::vector<std::string> reversed(words.rbegin(), words.rend());
      line_app.parse(reversed);
    } catch (const CLI::ParseError& e) {
      return UsageError(absl::StrCat(path, ":", line.line, ": ", e.what()));
    }
    // Its values checked on their own, so that a bad one names its line.
    scratch.script_path = path;
    scratch.script_text = "#";
    if (auto alone = BuildSubmitRequest(scratch, ctx); !alone.ok()) {
      return UsageError(absl::StrCat(path, ":", line.line, ": ", alone.status().message()));
    }
    for (const CLI::Option* option : parsed->get_options()) {
      if (option->count() == 0) continue;
      if (option->get_positional()) {
        return UsageError(absl::StrCat(path, ":", line.line, ": \"", absl::StrJoin(option->results(), " "),
                                       "\" is not an option (the script is the command)"));
      }
      const std::string name = option->get_name();
      auto it = std::find_if(taken.begin(), taken.end(), [&](const auto& t) { return t.first == name; });
      if (it == taken.end()) it = taken.insert(taken.end(), {name, {}});
      // --env repeats; every other option is the last line's.
      if (name != "--env") it->second.results.clear();
      it->second.results.insert(it->second.results.end(), option->results().begin(), option->results().end());
      it->second.origin = line.origin;
    }
  }
  for (auto& [name, from] : taken) {
    CLI::Option* target = submit->get_option(name);
    if (target->count() > 0) continue;  // the command line wins
    target->add_result(from.results);
    o.sources.push_back({name, ShownValue(*target), from.origin});
    try {
      target->run_callback();
    } catch (const CLI::ParseError& e) {
      return UsageError(absl::StrCat(from.origin, ": ", e.what()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string VersionLine() { return absl::StrCat("gpusched ", kVersion); }

int RunCli(const std::vector<std::string>& args, const LocalContext& ctx, const ClientFactory& make_client,
           std::ostream& out, std::ostream& err) {
  CLI::App app("Submit and inspect jobs on a gpusched GPU cluster.", "gpusched");
  app.set_version_flag("--version", VersionLine());
  std::optional<std::string> addr;
  AddText(&app, "--addr", &addr, "HOST:PORT",
          absl::StrCat("gpuschedd address (else $", kDaemonAddressEnv, ", cli.toml, ", kDefaultDaemonAddress, ")"));
  TlsFlags tls_flags;
  AddText(&app, "--tls-ca", &tls_flags.ca, "FILE",
          absl::StrCat("PEM CA certificates that signed the daemon's certificate: talk TLS (else $", kTlsCaEnv,
                       ", cli.toml tls_ca; default plaintext)"));
  AddText(&app, "--tls-cert", &tls_flags.cert, "FILE",
          absl::StrCat("PEM certificate for a daemon that requires client certificates (else $", kTlsCertEnv,
                       ", cli.toml tls_cert)"));
  AddText(&app, "--tls-key", &tls_flags.key, "FILE",
          absl::StrCat("PEM private key of --tls-cert (else $", kTlsKeyEnv, ", cli.toml tls_key)"));
  // Subcommands pass options they do not know up to here: --addr may follow the command name.
  app.fallthrough();

  Commands commands;
  struct Command {
    const char* name;
    std::function<CLI::App*()> define;
    Runner run;
  };
  CLI::App* submit = nullptr;
  // In the order `gpusched --help` lists them.
  const Command all[] = {
      {"submit", [&] { return submit = DefineSubmit(app, commands.submit); },
       [&](CommandContext& c) { return RunSubmit(commands.submit, c); }},
      {"status", [&] { return DefineStatus(app, commands.status); },
       [&](CommandContext& c) { return RunStatus(commands.status, c); }},
      {"cancel", [&] { return DefineJobList(app, "cancel", "Cancel jobs", commands.cancel); },
       [&](CommandContext& c) { return RunCancel(commands.cancel, c); }},
      {"history", [&] { return DefineHistory(app, commands.history); },
       [&](CommandContext& c) { return RunHistory(commands.history, c); }},
      {"hold",
       [&] { return DefineJobList(app, "hold", "Keep pending jobs from starting until released", commands.hold); },
       [&](CommandContext& c) { return RunHold(commands.hold, c); }},
      {"release", [&] { return DefineJobList(app, "release", "Let held jobs start again", commands.release); },
       [&](CommandContext& c) { return RunRelease(commands.release, c); }},
      {"logs", [&] { return DefineLogs(app, commands.logs); },
       [&](CommandContext& c) { return RunLogs(commands.logs, c); }},
      {"nodes", [&] { return DefineNodes(app, commands.nodes); },
       [&](CommandContext& c) { return RunNodes(commands.nodes, c); }},
      {"pools", [&] { return DefinePools(app, commands.pools); },
       [&](CommandContext& c) { return RunPools(commands.pools, c); }},
      {"run", [&] { return DefineRun(app, commands.run); },
       [&](CommandContext& c) { return RunInteractive(commands.run, c); }},
      {"alloc", [&] { return DefineAlloc(app, commands.alloc); },
       [&](CommandContext& c) { return RunAlloc(commands.alloc, c); }},
  };
  // Only the command named is defined: building every command's options
  // cost more than parsing the line. With no command named (--help,
  // --version, a word that is none) all are, for the help and the errors.
  const std::string first = FirstWord(app, args);
  const bool named = std::any_of(std::begin(all), std::end(all), [&](const Command& c) { return first == c.name; });
  std::vector<std::pair<CLI::App*, Runner>> subcommands;
  for (const Command& command : all) {
    if (!named || first == command.name) subcommands.emplace_back(command.define(), command.run);
  }
  app.require_subcommand(1);

  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 consumes from the back
    app.parse(reversed);
  } catch (const CLI::Success& e) {
    return app.exit(e, out, err) == 0 ? kExitOk : kExitUsage;  // --help, --version
  } catch (const CLI::ParseError& e) {
    if (app.get_subcommands().empty() && dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
      if (std::vector<std::string> extra = app.remaining(); !extra.empty()) {
        err << "gpusched: unknown command \"" << extra.front() << "\" (see gpusched --help)\n";
        return kExitUsage;
      }
      err << "gpusched: a command is required: submit, run, alloc, status, history, cancel, hold, release, logs or "
             "nodes (see gpusched --help)\n";
      return kExitUsage;
    }
    std::string hint = "gpusched --help";
    for (const auto& [sub, run] : subcommands) {
      if (sub->parsed()) hint = absl::StrCat("gpusched ", sub->get_name(), " --help");
    }
    err << ErrorLine(UsageError(absl::StrCat(e.what(), " (see ", hint, ")"))) << '\n';
    return kExitUsage;
  }

  auto runner =
      std::find_if(subcommands.begin(), subcommands.end(), [](const auto& entry) { return entry.first->parsed(); });
  if (runner == subcommands.end()) {  // require_subcommand makes this unreachable
    err << "gpusched: a command is required (see gpusched --help)\n";
    return kExitUsage;
  }

  try {
    if (submit != nullptr && submit->parsed() && commands.submit.script_path.has_value() &&
        commands.submit.command.empty()) {
      if (absl::Status s = ApplyScriptDirectives(submit, commands.submit, ctx); !s.ok()) {
        err << ErrorLine(s) << '\n';
        return ExitCodeFor(s);
      }
    }
    auto address = ResolveDaemonAddress(addr, ctx);
    if (!address.ok()) {
      err << ErrorLine(address.status()) << '\n';
      return ExitCodeFor(address.status());
    }
    auto tls = ResolveTls(tls_flags, ctx);
    if (!tls.ok()) {
      err << ErrorLine(tls.status()) << '\n';
      return ExitCodeFor(tls.status());
    }
    std::unique_ptr<SchedulerClient> client = make_client(DaemonEndpoint{*address, *std::move(tls)});
    CommandContext command{*client, ctx, out, err};
    absl::StatusOr<int> result = runner->second(command);
    out.flush();
    if (!result.ok()) {
      err << ErrorLine(result.status()) << '\n';
      return ExitCodeFor(result.status());
    }
    return *result;
  } catch (const std::exception& e) {
    err << "gpusched: internal error: " << e.what() << '\n';
    return kExitFailed;
  }
}

}  // namespace gpusched::cli
