import BeaconFrames
import Foundation
import Glibc
import Logging
import SystemSupport

/// Settings the raw HCI scanner and advertiser share.
public struct HCIOptions: Sendable {
    /// How long a command may wait for its Command Complete or Command Status (BlueZ's kernel
    /// side waits 2 s too).
    public var commandTimeout: Duration = .seconds(2)
    /// Where each run notes what it switched on (`hci0-scan`, `hci0-advertise`), so a run after
    /// one that was killed (SIGKILL, a crash) switches it off first.
    public var stateDirectory: String
    /// Whether bluetoothd runs: then a controller that refuses with Command Disallowed is held by
    /// it. Replaced in tests.
    public var bluetoothdIsRunning: @Sendable () -> Bool = { HCIDevice.bluetoothdIsRunning() }

    public init(commandTimeout: Duration = .seconds(2), stateDirectory: String? = nil,
                bluetoothdIsRunning: (@Sendable () -> Bool)? = nil) {
        self.commandTimeout = commandTimeout
        self.stateDirectory = stateDirectory ?? Self.defaultStateDirectory()
        if let bluetoothdIsRunning { self.bluetoothdIsRunning = bluetoothdIsRunning }
    }

    /// systemd's `$STATE_DIRECTORY` for a service (kept across restarts, where the runtime folder
    /// and a private /tmp are not), else `$XDG_RUNTIME_DIR/nearplay`, else `/tmp/nearplay-$UID`
    /// (as the simulated air).
    public static func defaultStateDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let directories = XDGDirectories(environment: environment)
        return directories.serviceStateDirectory ?? directories.runtimeDirectory
    }
}

/// What a run switched on, as noted in its state file.
enum HCIActivity: String, Sendable {
    case legacyScan = "scan legacy"
    case extendedScan = "scan extended"
    case legacyAdvertising = "advertise legacy"
    case extendedAdvertising = "advertise extended"

    /// The advertising set the extended advertiser uses: the highest handle the specification
    /// allows, far from the ones the kernel hands out from 1 upwards.
    static let advertisingHandle: UInt8 = 0xEF

    /// The commands that switch it off again.
    var stopCommands: [HCICommand] {
        switch self {
        case .legacyScan: [.leSetScanEnable(false, filterDuplicates: false)]
        case .extendedScan: [.leSetExtendedScanEnable(false, filterDuplicates: false)]
        case .legacyAdvertising: [.leSetAdvertisingEnable(false)]
        case .extendedAdvertising: [.leSetExtendedAdvertisingEnable(false, handle: Self.advertisingHandle),
                                    .leRemoveAdvertisingSet(handle: Self.advertisingHandle)]
        }
    }
}

/// The part of a scan or an advertisement that does not depend on which: opening the controller
/// (and waiting for it), reading its LE features, recovering from a run that was killed, turning
/// link failures into sentences, and switching off on the way out.
struct HCIRun {
    let controller: HCIController
    let options: HCIOptions
    let logger: Logger
    /// "scan" or "advertise": the state file's suffix.
    let role: String
    private var backoff = Backoff(first: .milliseconds(250), limit: .seconds(4))
    private var waitingSaid = false

    init(controller: HCIController, options: HCIOptions, logger: Logger, role: String) {
        self.controller = controller
        self.options = options
        self.logger = logger
        self.role = role
    }

    var statePath: String { options.stateDirectory + "/" + controller.name.replacingOccurrences(of: "/", with: "_") + "-" + role }

    /// A link to the controller, waiting while it is missing; nil once cancelled.
    mutating func open() async throws -> HCILink? {
        while !Task.isCancelled {
            do {
                let fd = try controller.open()
                backoff.reset()
                waitingSaid = false
                return try await HCILink.open(fd: fd, name: controller.name)
            } catch let error as RadioError where error.code == .adapterMissing {
                if !waitingSaid {
                    logger.notice("\(error.message) Waiting for it.")
                    waitingSaid = true
                }
            }
            do { try await backoff.wait() } catch { return nil }
        }
        return nil
    }

    /// Switches `activity` off (when on) and closes the link.
    func end(_ link: HCILink, _ activity: HCIActivity?) async {
        if let activity { await stop(activity, on: link) }
        link.close()
    }

    /// After the link's events ended: when cancelled, switches off and returns false; when the
    /// controller went away, says so, waits a while and returns true to open it again.
    mutating func ended(_ link: HCILink, _ activity: HCIActivity?, detail: String? = nil) async -> Bool {
        if Task.isCancelled {
            await end(link, activity)
            return false
        }
        let reason = link.closedBy.map { radioError($0).message } ?? "Bluetooth controller \(controller.name) went away."
        link.close()
        // Its state went with it.
        if activity != nil { try? FileManager.default.removeItem(atPath: statePath) }
        logger.warning("\(reason) Waiting for it to come back\(detail.map { " (\($0))" } ?? "").")
        do {
            try await backoff.wait()
            return true
        } catch {
            return false
        }
    }

    /// The controller's LE features; none when it does not know the command (a Bluetooth 4.0
    /// controller answers Unknown HCI Command).
    func features(_ link: HCILink) async throws -> HCILEFeatures {
        do {
            let result = try await link.execute(.leReadLocalSupportedFeatures, timeout: options.commandTimeout)
            return try HCILEFeatures(returnParameters: result.returnParameters)
        } catch HCILinkError.refused(_, .unknownCommand) {
            return HCILEFeatures(rawValue: 0)
        } catch let error as FrameError {
            throw RadioError(.controllerRefused, """
                Bluetooth controller \(controller.name) gave a malformed answer to LE Read Local Supported Features \
                (\(error)), so which advertising commands it supports is unknown: reset it (power it off and on, \
                or unplug it) and try again, or use --backend bluez.
                """)
        } catch let error as HCILinkError {
            throw radioError(error)
        }
    }

    /// When the state file says a run that is gone left something switched on, switches it off
    /// (errors ignored: it may be off already) and removes the file. Throws when another live
    /// process holds the role on this controller.
    func recoverFromEarlierRun(_ link: HCILink) async throws {
        guard let text = try? String(contentsOfFile: statePath, encoding: .utf8) else { return }
        let lines = text.split(separator: "\n").map(String.init)
        guard lines.count >= 2, let pid = Int32(lines[0]), let activity = HCIActivity(rawValue: lines[1]) else {
            try? FileManager.default.removeItem(atPath: statePath)
            return
        }
        if pid != getpid(), kill(pid, 0) == 0 || errno == EPERM {
            throw RadioError(.controllerBusy, "Another nearplay (pid \(pid)) is already using Bluetooth controller \(controller.name) to \(role); stop it first (or remove \(statePath) if that pid is not nearplay).")
        }
        logger.notice("A run that did not stop cleanly (pid \(pid)) left \(controller.name) doing \(activity.rawValue); switching it off first.")
        for command in activity.stopCommands {
            _ = try? await link.execute(command, timeout: options.commandTimeout)
        }
        try? FileManager.default.removeItem(atPath: statePath)
    }

    /// Notes that `activity` is switched on, before switching it on, so a kill in between
    /// leaves a note rather than an unknown state.
    func note(_ activity: HCIActivity) {
        try? FileManager.default.createDirectory(atPath: options.stateDirectory, withIntermediateDirectories: true,
                                                 attributes: [.posixPermissions: 0o700])
        if !FileManager.default.createFile(atPath: statePath, contents: Data("\(getpid())\n\(activity.rawValue)\n".utf8)) {
            logger.warning("Cannot write \(statePath): after a crash, the next run will not know to switch \(activity.rawValue) off.")
        }
    }

    /// Switches `activity` off and removes the note, outside the (perhaps cancelled) calling
    /// task so the commands are really sent; returns when the controller answered or timed out.
    func stop(_ activity: HCIActivity, on link: HCILink) async {
        let timeout = options.commandTimeout
        let logger = logger
        let name = controller.name
        await Task.detached {
            for command in activity.stopCommands {
                do {
                    try await link.execute(command, timeout: timeout)
                } catch {
                    logger.warning("Could not switch \(activity.rawValue) off on \(name): \(error).")
                }
            }
        }.value
        try? FileManager.default.removeItem(atPath: statePath)
    }

    /// Runs a setup command; when the controller says Command Disallowed (it is already
    /// scanning or advertising for someone), decides whose: bluetoothd's is an error saying what
    /// to do; otherwise a leftover of some earlier program, switched off before one more try.
    func setUp(_ command: HCICommand, on link: HCILink, leftover: HCIActivity) async throws {
        do {
            try await link.execute(command, timeout: options.commandTimeout)
            return
        } catch HCILinkError.refused(_, .commandDisallowed) {
            if options.bluetoothdIsRunning() { throw heldByBluetoothd(command.opcode) }
            logger.notice("Bluetooth controller \(controller.name) refused \(command.opcode) (Command Disallowed): something left it doing \(leftover.rawValue); switching that off.")
            for stop in leftover.stopCommands { _ = try? await link.execute(stop, timeout: options.commandTimeout) }
        } catch let error as HCILinkError {
            throw radioError(error)
        }
        do {
            try await link.execute(command, timeout: options.commandTimeout)
        } catch HCILinkError.refused(_, .commandDisallowed) {
            throw RadioError(.controllerBusy, "Another program is \(role == "scan" ? "scanning" : "advertising") on Bluetooth controller \(controller.name) (it refused \(command.opcode) with Command Disallowed): stop it, or use --backend bluez to share the controller through bluetoothd.")
        } catch let error as HCILinkError {
            throw radioError(error)
        }
    }

    /// Runs a command whose failure ends the run.
    func require(_ command: HCICommand, on link: HCILink) async throws {
        do {
            try await link.execute(command, timeout: options.commandTimeout)
        } catch HCILinkError.refused(_, .commandDisallowed) where options.bluetoothdIsRunning() {
            throw heldByBluetoothd(command.opcode)
        } catch let error as HCILinkError {
            throw radioError(error)
        }
    }

    func heldByBluetoothd(_ opcode: HCIOpcode) -> RadioError {
        RadioError(.controllerBusy, "bluetoothd holds Bluetooth controller \(controller.name) (it refused \(opcode) with Command Disallowed): use --backend bluez, or stop bluetoothd (`sudo systemctl stop bluetooth`) to use the hci backend.")
    }

    /// A link failure as a sentence that says what to do.
    func radioError(_ error: HCILinkError) -> RadioError {
        let name = controller.name
        switch error {
        case .refused(let opcode, .commandDisallowed):
            return RadioError(.controllerBusy, "Bluetooth controller \(name) refused \(opcode) with Command Disallowed: another program is using it; stop it, or use --backend bluez.")
        case .refused(let opcode, let status):
            return RadioError(.controllerRefused, "Bluetooth controller \(name) refused \(opcode): \(status). It may not support this; try --backend bluez.")
        case .timedOut(let opcode, let timeout):
            return RadioError(.controllerUnresponsive, "Bluetooth controller \(name) did not answer \(opcode) within \(timeout.inSeconds) s: reset it (power it off and on, or unplug it) and try again.")
        case .gone(let code?) where code == EPERM || code == EACCES:
            return RadioError(.permissionDenied, HCIDevice.permissionAdvice(name, action: "send commands to", code: code))
        case .gone(ENETDOWN?):
            return RadioError(.adapterMissing, "Bluetooth controller \(name) was powered off.")
        case .gone(let code):
            return RadioError(.adapterMissing, "Bluetooth controller \(name) went away" + (code.map { " (\(String(cString: strerror($0))))" } ?? "") + ".")
        }
    }
}
