// nearplay-agent-bench: the agent's figures.
//
// 1. First packet of a newly arrived player → `player_nearby` with the resolved profile, in this
//    process (LiveProximity → NearbyPlayers → IdentityResolver → AgentEventBus), for N players
//    registered at a lobby child on 127.0.0.1: cold (empty cache, the lobby asked), warm from the
//    store (a fresh resolver over the same GRDB file) and warm from memory (the same resolver).
//    Goals: cold ≤ 300 ms, warm ≤ 5 ms.
// 2. A `nearplay agent` child on a `nearplay air` child with 200 beacons at 10 Hz nobody
//    registered (so the agent resolves each once and then only ranges them), then with none:
//    CPU from /proc/PID/stat, RSS from /proc/PID/status. Goals: ≤ 2 % of a core and ≤ 40 MB busy,
//    ≤ 0.5 % idle.
//
// 3. (--only boundary) Identities rolling over every 10 s: a `nearplay agent` among N players on
//    the simulated air who advertise their rotating identities; its CPU in the 2 s after each
//    period boundary against the rest (RotationBoundary.swift).
//
// Usage: nearplay-agent-bench [--runs N] [--players N] [--beacons N] [--warm-up S] [--window S]
//                             [--only latency|load|boundary] [--bin DIR]
// Build with `swift build -c release` (it runs the built nearplay and nearplay-lobby next to it).
import Agent
import Foundation
import Logging

var runs = 3
var playerCount = 50
var beaconCount = 200
var warmUp = 10.0
var window = 30.0
var only: String?
var bin = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path
var arguments = CommandLine.arguments.dropFirst()
func usage() -> Never {
    FileHandle.standardError.write(Data("""
        usage: nearplay-agent-bench [--runs N] [--players N] [--beacons N] [--warm-up S] [--window S] [--only latency|load|boundary] [--bin DIR]

        """.utf8))
    exit(64)
}
func integer(_ text: String) -> Int { if let value = Int(text), value > 0 { return value }; usage() }
func seconds(_ text: String) -> Double { if let value = Double(text), value > 0 { return value }; usage() }
while let argument = arguments.popFirst() {
    guard let value = arguments.popFirst() else { usage() }
    switch argument {
    case "--runs": runs = integer(value)
    case "--players": playerCount = integer(value)
    case "--beacons": beaconCount = integer(value)
    case "--warm-up": warmUp = seconds(value)
    case "--window": window = seconds(value)
    case "--only":
        guard ["latency", "load", "boundary"].contains(value) else { usage() }
        only = value
    case "--bin": bin = value
    default: usage()
    }
}
LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = .warning
    return handler
}

let nearplay = bin + "/nearplay"
let lobbyExecutable = bin + "/nearplay-lobby"
for executable in [nearplay, lobbyExecutable] where !FileManager.default.isExecutableFile(atPath: executable) {
    FileHandle.standardError.write(Data("nearplay-agent-bench: \(executable) is not built: run `swift build -c release` first.\n".utf8))
    exit(66)
}

let folder = "/tmp/npagentbench-\(getpid())"
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
let port = try freePort()
let lobby = try ChildProcess(lobbyExecutable, ["serve", "--port", String(port), "--bcrypt-cost", "4", "--sign-in-throttle", "off", "--db", folder + "/lobby.sqlite"],
                             log: folder + "/lobby.log")
defer { lobby.stop() }
guard lobby.waitFor("lobby listening on") else {
    FileHandle.standardError.write(Data("nearplay-agent-bench: the lobby did not start: \(lobby.output)\n".utf8))
    exit(1)
}
let lobbyURL = "http://127.0.0.1:\(port)"
let observer = try await register("observer", at: lobbyURL)

print("nearplay-agent-bench on \(machineDescription()); load average \(String(format: "%.2f", loadAverage())) at start")
func f(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }
func verdict(_ ok: Bool) -> String { ok ? "ok" : "MISSED" }

if only != "load" && only != "boundary" {
    var players: [BenchPlayer] = []
    for index in 1...playerCount { players.append(try await register(String(format: "player%03d", index), at: lobbyURL)) }
    print("""

        1. first packet → player_nearby (in process, \(playerCount) players, lobby on 127.0.0.1), ms
        run  load   cold median/p95/max      warm store median/p95/max   warm memory median/p95/max
        """)
    var cold: [Double] = [], warmStore: [Double] = [], warmMemory: [Double] = []
    for run in 1...runs {
        let store = try AgentStore(directory: folder + "/latency-\(run)")
        let load = loadAverage()
        let coldResolver = IdentityResolver(store: store, lobby: observer.client, ttl: 600, negativeTTL: 60)
        let c = try await firstPacketLatencies(of: players, resolver: coldResolver)
        let storeResolver = IdentityResolver(store: store, lobby: observer.client, ttl: 600, negativeTTL: 60)
        let s = try await firstPacketLatencies(of: players, resolver: storeResolver)
        let m = try await firstPacketLatencies(of: players, resolver: storeResolver)
        cold += c; warmStore += s; warmMemory += m
        let (sc, ss, sm) = (Summary(c), Summary(s), Summary(m))
        var row = "\(run)    \(f(load, 2))   \(f(sc.median)) / \(f(sc.p95)) / \(f(sc.max))".padding(toLength: 43, withPad: " ", startingAt: 0)
        row += "\(f(ss.median, 2)) / \(f(ss.p95, 2)) / \(f(ss.max, 2))".padding(toLength: 28, withPad: " ", startingAt: 0)
        row += "\(f(sm.median, 2)) / \(f(sm.p95, 2)) / \(f(sm.max, 2))"
        print(row)
    }
    let (sc, ss, sm) = (Summary(cold), Summary(warmStore), Summary(warmMemory))
    var line = "all  cold \(f(sc.median)) / \(f(sc.p95)) / \(f(sc.max)) ms (goal ≤ 300: \(verdict(sc.max <= 300))); "
    line += "warm store \(f(ss.median, 2)) / \(f(ss.p95, 2)) / \(f(ss.max, 2)) ms, memory \(f(sm.median, 2)) / \(f(sm.p95, 2)) / \(f(sm.max, 2)) ms "
    line += "(goal ≤ 5: \(verdict(max(ss.max, sm.max) <= 5)))"
    print(line)
}

if only == "boundary" {
    print("""

        3. identities rolling over: a `nearplay agent` among \(playerCount) players on the simulated air, a 10 s period, 60 s
        run  load   CPU % in the 2 s after a boundary   CPU % between   boundaries   nearby at end   own rotations
        """)
    for run in 1...runs {
        let load = loadAverage()
        let result = try await RotationBoundary(folder: folder + "/r\(run)", nearplay: nearplay, lobbyExecutable: lobbyExecutable,
                                                players: playerCount).run()
        print("\(run)    \(f(load, 2))   " + f(result.boundaryPercent, 2).padding(toLength: 36, withPad: " ", startingAt: 0)
              + f(result.betweenPercent, 2).padding(toLength: 16, withPad: " ", startingAt: 0)
              + "\(result.boundaries)".padding(toLength: 13, withPad: " ", startingAt: 0)
              + "\(result.nearbyAtEnd)".padding(toLength: 16, withPad: " ", startingAt: 0) + "\(result.rotations)")
    }
}

if only != "latency" && only != "boundary" {
    let player = try await register("agent", at: lobbyURL)
    let rig = AgentRig(folder: folder, nearplay: nearplay, lobbyURL: lobbyURL, player: player)
    print("""

        2. `nearplay agent` process on the simulated air (warm-up \(f(warmUp, 0)) s, window \(f(window, 0)) s)
        run  scene          load   CPU % of a core   RSS mean/max MB   cached nobody/players
        """)
    var busy: [AgentLoad] = [], idle: [AgentLoad] = []
    for run in 1...runs {
        for beacons in [beaconCount, 0] {
            let result = try await rig.measure(beacons: beacons, warmUp: warmUp, window: window, label: "load-\(run)-\(beacons)")
            if beacons > 0 { busy.append(result) } else { idle.append(result) }
            let scene = beacons > 0 ? "\(beacons) beacons" : "idle"
            var row = "\(run)    " + scene.padding(toLength: 15, withPad: " ", startingAt: 0) + "\(f(result.load, 2))   "
            row += "\(f(result.cpuPercent, 2))".padding(toLength: 18, withPad: " ", startingAt: 0)
            row += "\(f(result.rssMeanMB)) / \(f(result.rssMaxMB))".padding(toLength: 18, withPad: " ", startingAt: 0)
            row += "\(result.cachedNobody) / \(result.cachedPlayers)"
            print(row)
        }
    }
    func range(_ values: [Double], _ digits: Int) -> String {
        "\(f(values.min() ?? .nan, digits))–\(f(values.max() ?? .nan, digits))"
    }
    let busyCPU: [Double] = busy.map(\.cpuPercent), idleCPU: [Double] = idle.map(\.cpuPercent)
    let busyRSS: [Double] = busy.map(\.rssMaxMB), idleRSS: [Double] = idle.map(\.rssMaxMB)
    var line = "all  \(beaconCount) beacons: CPU \(range(busyCPU, 2)) % (goal ≤ 2: \(verdict(busyCPU.allSatisfy { $0 <= 2 }))), "
    line += "RSS max \(range(busyRSS, 1)) MB (goal ≤ 40: \(verdict(busyRSS.allSatisfy { $0 <= 40 }))); "
    line += "idle: CPU \(range(idleCPU, 2)) % (goal ≤ 0.5: \(verdict(idleCPU.allSatisfy { $0 <= 0.5 }))), "
    line += "RSS max \(range(idleRSS, 1)) MB"
    print(line)
}
print("load average \(f(loadAverage(), 2)) at end")
