// D-Bus decode-path benchmark: PropertiesChanged signals per second that BlueZScanner turns into
// Advertisements, and its CPU use at 1,000 signals per second.
//
// A private dbus-daemon; a sender process of our own (this executable, `sender` mode) that owns
// org.bluez, serves an adapter and 64 devices like bluetoothd, and pumps Device1
// PropertiesChanged signals (RSSI + iBeacon ManufacturerData); the scanner runs in this process,
// so getrusage(RUSAGE_SELF) is its CPU alone. With `agent`, an advertiser shares the scanner's
// BlueZManager, as in the agent (its CPU is then included). Usage:
//   swift run -c release nearplay-dbus-bench [flood-count] [rate-seconds] [agent]
import BusTestSupport
import DBus
import Foundation
import Radio
import Spawn
import Synchronization

let deviceCount = 64

func devicePath(_ index: Int) -> DBusObjectPath {
    DBusObjectPath(String(format: "/org/bluez/hci0/dev_C0_FF_EE_00_00_%02X", index))!
}

func manufacturerData(minor: Int) -> DBusValue {
    let bytes: [UInt8] = [0x02, 0x15, 0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10,
                          0x96, 0xE0, 0x00, 0x01, 0x00, UInt8(minor), 0xC5]
    return .dictionary(key: "q", value: "v", [DBusDictionaryEntry(.uint16(0x004C), .variant(.bytes(bytes)))])
}

// MARK: - Sender (a minimal bluetoothd)

func runSender(address: String) async throws {
    let connection = try await DBusConnection.connect(address: address)
    let adapter = DBusExportedObject(path: "/org/bluez/hci0", interfaces: [
        DBusExportedInterface(name: "org.bluez.Adapter1", methods: [
            DBusExportedMethod(name: "SetDiscoveryFilter", inputSignature: "a{sv}") { _ in [] },
            DBusExportedMethod(name: "StartDiscovery") { _ in [] },
            DBusExportedMethod(name: "StopDiscovery") { _ in [] },
        ], properties: ["Address": .string("00:01:02:03:04:05"), "Powered": .boolean(true), "Discovering": .boolean(false)]),
        DBusExportedInterface(name: "org.bluez.LEAdvertisingManager1", methods: [
            DBusExportedMethod(name: "RegisterAdvertisement", inputSignature: "oa{sv}") { _ in [] },
            DBusExportedMethod(name: "UnregisterAdvertisement", inputSignature: "o") { _ in [] },
        ], properties: ["ActiveInstances": .byte(0), "SupportedInstances": .byte(5)]),
    ])
    try await connection.export(DBusExportedObject(path: "/", interfaces: [], isObjectManager: true))
    try await connection.export(adapter)
    for index in 0..<deviceCount {
        try await connection.export(DBusExportedObject(path: devicePath(index), interfaces: [
            DBusExportedInterface(name: "org.bluez.Device1", properties: [
                "Address": .string(String(format: "C0:FF:EE:00:00:%02X", index)), "AddressType": .string("public"),
                "Adapter": .objectPath("/org/bluez/hci0"), "RSSI": .int16(-60), "ManufacturerData": manufacturerData(minor: index),
            ]),
        ]))
    }
    try await connection.requestName("org.bluez")
    // Prebuilt signals, cycled: every device, RSSI moving between -50 and -81.
    let signals: [DBusMessage] = (0..<(deviceCount * 8)).map { index in
        let device = index % deviceCount
        return .signal(path: devicePath(device), interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", body: [
            .string("org.bluez.Device1"),
            .stringVariantDictionary([("RSSI", .int16(Int16(-50 - index % 32))), ("ManufacturerData", manufacturerData(minor: device))]),
            .strings([]),
        ])
    }
    print("ready")
    fflush(nil)
    var cursor = 0
    func batch(_ count: Int) -> [DBusMessage] {
        var result: [DBusMessage] = []
        result.reserveCapacity(count)
        for _ in 0..<count {
            result.append(signals[cursor])
            cursor = (cursor + 1) % signals.count
        }
        return result
    }
    while let line = readLine() {
        let words = line.split(separator: " ")
        let started = ContinuousClock.now
        switch words.first {
        case "flood":
            // Each signal goes out 8 times in a row, marshalled once (bluetoothd repeats an
            // unchanged advertisement the same way), so the sender is not the bottleneck.
            let total = Int(words[1])!
            var sent = 0
            while sent < total {
                let count = min(8, total - sent)
                try await connection.send(signals[cursor], copies: count)
                cursor = (cursor + 1) % signals.count
                sent += count
            }
            print("done \(sent) \(seconds(started.duration(to: .now)))")
        case "rate":
            // rate SIGNALS-PER-SECOND SECONDS TICK-MS: a burst every TICK-MS.
            let perSecond = Int(words[1])!, duration = Double(words[2])!, tickMilliseconds = Int(words[3])!
            let tick = Duration.milliseconds(tickMilliseconds)
            let perTick = max(1, perSecond * tickMilliseconds / 1000)
            var next = started
            var sent = 0
            while started.duration(to: .now) < .seconds(duration) {
                try await connection.send(batch(perTick))
                sent += perTick
                next += tick
                try await Task.sleep(until: next, clock: .continuous)
            }
            print("done \(sent) \(seconds(started.duration(to: .now)))")
        default:
            connection.close()
            return
        }
        fflush(nil)
    }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}

// MARK: - Measuring side

/// Blocking line reads from the sender's output (a benchmark may block a thread for this).
final class LineReader {
    private let fd: Int32
    private var buffer: [UInt8] = []
    init(fd: Int32) { self.fd = fd }

    func next() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(fd, &chunk, chunk.count)
            guard count > 0 else { return nil }
            buffer += chunk[..<count]
        }
    }
}

final class Counter: Sendable {
    let received = Atomic<Int>(0)
    let lastNanoseconds = Atomic<UInt64>(0)
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// Context switches of this process so far (voluntary: it went to sleep; involuntary: preempted).
func contextSwitches() -> Int {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return usage.ru_nvcsw + usage.ru_nivcsw
}

func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

func runBenchmark(floodCount: Int, rateSeconds: Double, withAdvertiser: Bool) async throws {
    let bus = try await PrivateBus()
    defer { bus.stop() }
    // Its replies come through a pipe read here with blocking reads: polling for them would add
    // wake-ups to the CPU and context switches this process measures.
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { throw TestEnvironmentError("no pipe for the sender: \(String(cString: strerror(errno)))") }
    for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    defer { close(ends[0]) }
    let sender: SpawnedProcess
    do {
        defer { close(ends[1]) }
        sender = try SpawnedProcess(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path, ["sender", bus.address],
                                    output: .descriptor(ends[1]), errors: .descriptor(STDERR_FILENO), input: true)
    }
    defer { sender.kill() }
    let replies = LineReader(fd: ends[0])
    guard replies.next() == "ready" else { throw TestEnvironmentError("the sender did not start") }
    func command(_ text: String) async throws -> String {
        sender.send(text + "\n")
        return replies.next() ?? ""
    }

    let counter = Counter()
    let manager = BlueZManager(busAddress: bus.address)
    let scanner = BlueZScanner(manager: manager)
    let advertising = withAdvertiser ? Task {
        try await BlueZAdvertiser(manager: manager).advertise(AdvertisingPayload(manufacturerData: [0x004C: [0x02, 0x15]]))
    } : nil
    let scan = Task {
        try await scanner.scan { _ in
            counter.received.add(1, ordering: .relaxed)
            counter.lastNanoseconds.store(monotonicNanoseconds(), ordering: .relaxed)
        }
    }
    while counter.received.load(ordering: .relaxed) < deviceCount { try await Task.sleep(for: .milliseconds(10)) }
    print("scanner up: \(deviceCount) devices reported at discovery start"
        + (withAdvertiser ? "; an advertiser shares its BlueZManager" : ""))

    // 1. Throughput: as many signals as the sender can push; rate over the time the scanner took.
    let before = counter.received.load(ordering: .relaxed)
    let floodStart = monotonicNanoseconds()
    let cpuBeforeFlood = cpuSeconds()
    let floodReply = try await command("flood \(floodCount)")
    var lastCount = -1
    while counter.received.load(ordering: .relaxed) != lastCount {  // drain
        lastCount = counter.received.load(ordering: .relaxed)
        try await Task.sleep(for: .milliseconds(300))
    }
    let converted = lastCount - before
    let floodSeconds = Double(counter.lastNanoseconds.load(ordering: .relaxed) - floodStart) / 1e9
    let floodCPU = cpuSeconds() - cpuBeforeFlood
    print("flood: sender \(floodReply); scanner turned \(converted) of \(floodCount) signals into advertisements in "
        + String(format: "%.2f s = %.0f signals/s (CPU %.2f s, %.0f %% of one core while draining)",
                 floodSeconds, Double(converted) / floodSeconds, floodCPU, 100 * floodCPU / floodSeconds))
    // The sender and dbus-daemon share the machine with the scanner; when they are the limit, the
    // scanner's own cost per signal says what it could take on one core.
    print(String(format: "capacity: %.1f µs of scanner CPU per signal = %.0f signals per CPU-second",
                 1e6 * floodCPU / Double(converted), Double(converted) / floodCPU))

    // 2. CPU at a steady 1,000 signals/s: in bursts of 10 every 10 ms, and one every millisecond
    // (closer to bluetoothd, which sends one signal per advertisement received).
    for (tickMilliseconds, pattern) in [(10, "10 every 10 ms"), (1, "1 every ms")] {
        let steadyBefore = counter.received.load(ordering: .relaxed)
        let cpuBefore = cpuSeconds()
        let switchesBefore = contextSwitches()
        let wallBefore = ContinuousClock.now
        let rateReply = try await command("rate 1000 \(rateSeconds) \(tickMilliseconds)")
        try await Task.sleep(for: .milliseconds(200))
        let cpu = cpuSeconds() - cpuBefore
        let switches = contextSwitches() - switchesBefore
        let wall = seconds(wallBefore.duration(to: .now))
        let steadyConverted = counter.received.load(ordering: .relaxed) - steadyBefore
        print("steady (\(pattern)): sender \(rateReply); scanner converted \(steadyConverted); "
            + String(format: "CPU %.3f s over %.2f s = %.2f %% of one core at 1,000 signals/s; %.0f context switches/s",
                     cpu, wall, 100 * cpu / wall, Double(switches) / wall))
    }

    _ = try? await command("quit")
    scan.cancel()
    _ = try? await scan.value
    advertising?.cancel()
    _ = try? await advertising?.value
}

let arguments = CommandLine.arguments
if arguments.count >= 3, arguments[1] == "sender" {
    try await runSender(address: arguments[2])
} else {
    let floodCount = arguments.count > 1 ? Int(arguments[1]) ?? 200_000 : 200_000
    let rateSeconds = arguments.count > 2 ? Double(arguments[2]) ?? 10 : 10
    try await runBenchmark(floodCount: floodCount, rateSeconds: rateSeconds,
                           withAdvertiser: arguments.count > 3 && arguments[3] == "agent")
}
