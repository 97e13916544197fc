// The raw HCI scanner at rest: CPU while `nearplay scan --backend hci` would wait for
// advertisements that do not come, measured in process against a fake controller on a
// socketpair (this machine's kernel has no Bluetooth).
//
//   nearplay-hci-bench idle [seconds]     (default 60) the scanner and the proximity pipeline as
//       `nearplay scan` runs them (one tick a second), the fake controller silent after setup
//
// CPU is this whole process's (getrusage), so it includes the fake controller's thread, which
// blocks in poll while there is nothing to answer.
import BusTestSupport
import Foundation
import Proximity
import Radio
import Ranging

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

let arguments = CommandLine.arguments.dropFirst()
let mode = arguments.first ?? "idle"
guard mode == "idle" else {
    FileHandle.standardError.write(Data("unknown mode \(mode): use idle [seconds]\n".utf8))
    exit(64)
}
let seconds = arguments.dropFirst().first.flatMap { Double($0) } ?? 60
let fake = FakeController(features: FakeController.extendedFeatures)
let folder = NSTemporaryDirectory() + "nearplay-hci-bench-\(getpid())"
let scanner = HCIScanner(controller: fake.controller, options: HCIOptions(stateDirectory: folder, bluetoothdIsRunning: { false }))
/// What `nearplay scan` runs: the scanner through the proximity pipeline, its updates dropped.
@Sendable func scanLikeTheCommand(_ scanner: HCIScanner) async throws {
    try await LiveProximity(scanner: scanner, configuration: RangingConfiguration()).run { _ in }
}
let scan = Task { try await scanLikeTheCommand(scanner) }
guard await fake.waitForCommands({ $0.contains(.leSetExtendedScanEnable) }) else {
    FileHandle.standardError.write(Data("the scanner never enabled scanning on the fake controller\n".utf8))
    exit(1)
}
try await Task.sleep(for: .seconds(2))  // start-up allocations, first ticks
let before = cpuSeconds()
let began = ContinuousClock.now
try await Task.sleep(for: .seconds(seconds))
let used = cpuSeconds() - before
let elapsed = began.duration(to: .now).inSeconds
scan.cancel()
_ = await scan.result
fake.stop()
try? FileManager.default.removeItem(atPath: folder)
print(String(format: "hci scanner idle for %.0f s: %.3f s of CPU", elapsed, used))
print(String(format: "RESULT hci_idle_cpu_percent=%.3f seconds=%.0f", 100 * used / elapsed, elapsed))
