import ArgumentParser
import BeaconFrames
import Foundation
import Proximity
import Radio
import Ranging
import Traces

struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Scan for beacons nearby through BlueZ (or raw HCI, or the simulated air) and show them live.",
        discussion: """
        On a terminal, a table of the beacons in range refreshed in place: identity, address, RSSI, \
        filtered RSSI, distance, zone and seconds since last seen. With --json, the proximity events \
        of DESIGN.md as JSON Lines. Runs until interrupted; stops discovery on the way out.
        """
    )

    @Flag(help: "Stream proximity events as JSON Lines instead of the live table.")
    var json = false

    @OptionGroup var scanning: ScannerOptions<ScanCommand>
    @OptionGroup var ranging: RangingOptions

    func run() async throws {
        scanning.radio.bootstrapLogging()
        let scanner = scanning.selection.makeScanner()
        let view: any LiveView = if json {
            JSONEventView()
        } else if isatty(STDOUT_FILENO) == 1 {
            TerminalTableView()
        } else {
            EventLineView()
        }
        let configuration = ranging.configuration
        do {
            try await runUntilInterrupted {
                try await LiveProximity(scanner: scanner, configuration: configuration).run { update in
                    view.show(events: update.events, tracker: update.tracker, now: update.now, isTick: update.isTick)
                }
            }
        } catch is CancellationError {
        } catch {
            throw RadioFailure.report(error)
        }
    }
}

extension ScanCommand: RSSIThresholdHelp {
    static let rssiThresholdHelp = "Ignore advertisements weaker than this, in dBm (-127 to 20; BlueZ and hci, the simulated air hears down to -100)."
}

/// How `scan` shows what ranging says.
protocol LiveView: Sendable {
    func show(events: [ProximityEvent], tracker: ProximityTracker, now: Double, isTick: Bool)
}

/// `--json`: the event lines of DESIGN.md, flushed as they come.
struct JSONEventView: LiveView {
    func show(events: [ProximityEvent], tracker: ProximityTracker, now: Double, isTick: Bool) {
        guard !events.isEmpty else { return }
        for event in events { StandardOutput.line(EventFormat.json(event)) }
        StandardOutput.flush()
    }
}

/// Output to a pipe or file without --json: the replay table's rows.
struct EventLineView: LiveView {
    func show(events: [ProximityEvent], tracker: ProximityTracker, now: Double, isTick: Bool) {
        guard !events.isEmpty else { return }
        for event in events { StandardOutput.line(EventTable().row(event, truth: nil)) }
        StandardOutput.flush()
    }
}

/// On a terminal: the beacons in range, nearest first, redrawn in place once a second and when
/// one enters or leaves.
struct TerminalTableView: LiveView {
    func show(events: [ProximityEvent], tracker: ProximityTracker, now: Double, isTick: Bool) {
        guard isTick || events.contains(where: { $0.kind != .range }) else { return }
        var lines = [
            pad("beacon", 48) + "  " + pad("address", 17) + "  " + pad("rssi", 4, right: true) + "  "
                + pad("filt", 6, right: true) + "  " + pad("distance (68 %)", 19, right: true) + "  " + pad("zone", 9) + "  "
                + pad("seen", 5, right: true),
        ]
        let tracks = tracker.tracks.sorted {
            ($0.distance ?? .infinity, $0.identity.description) < ($1.distance ?? .infinity, $1.identity.description)
        }
        for track in tracks {
            lines.append(pad(track.identity.description, 48) + "  " + pad(track.address.description, 17) + "  "
                + pad(track.lastRSSI.map(String.init) ?? "-", 4, right: true) + "  "
                + pad(track.filteredRSSI.map { String(format: "%.1f", $0) } ?? "-", 6, right: true) + "  "
                + pad(distanceText(track.distance, track.distanceInterval), 19, right: true) + "  "
                + pad(track.zone.rawValue, 9) + "  "
                + pad(String(format: "%.0fs", max(0, now - track.lastSeen)), 5, right: true))
        }
        if tracks.isEmpty { lines.append("(no beacons in range yet)") }
        // Home, clear to the end of the screen, draw.
        StandardOutput.write("\u{1B}[H\u{1B}[J" + lines.joined(separator: "\n") + "\n")
        StandardOutput.flush()
    }
}
