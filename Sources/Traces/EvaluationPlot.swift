import Foundation
import Ranging

/// One recording's evaluation drawn as SVG: Nearplay's distance with its interval band, the
/// baselines and the truth over time, on the zone bands.
///
/// The x axis is the recording's time with every silence longer than ``longestGap`` shortened
/// to it (the NIST recordings sit hours apart between distances), the y axis metres from 0 to
/// the plot's ceiling; values above it are drawn at it. Each series is a `<polyline>` whose
/// `data-series` names it; the plot area's `<g>` carries the scale (`data-left`, `data-top`,
/// `data-width`, `data-height`, `data-x-max`, `data-y-max`) so that a reader can map points
/// back to seconds and metres.
public struct EvaluationPlot: Sendable {
    /// A point of a series: seconds on the recording's clock, metres.
    public struct Point: Sendable, Hashable {
        public var time: Double
        public var distance: Double
        public init(time: Double, distance: Double) {
            self.time = time
            self.distance = distance
        }
    }

    public var title: String
    /// Nearplay's estimates and their intervals.
    public var estimates: [(time: Double, distance: Double, interval: ClosedRange<Double>?)] = []
    /// Named baselines' estimates.
    public var baselines: [(name: String, points: [Point])] = []
    public var truth: [Point] = []
    public var zones = ZoneBoundaries()

    /// Silences longer than this (s) are drawn this long.
    public static let longestGap = 30.0
    /// At most this many points per series; longer series keep every k-th point.
    public static let mostPoints = 2_000

    static let left = 60.0, top = 40.0, width = 900.0, height = 360.0

    public init(title: String) { self.title = title }

    /// Spacings of the time axis's ticks, in seconds.
    static let timeSteps: [Double] = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400]

    /// "45 s", "12 min", "2 h 30 min": a duration as a person reads it.
    public static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        if whole < 120 { return "\(whole) s" }
        let minutes = whole / 60
        if minutes < 120 { return "\(minutes) min" }
        return minutes % 60 == 0 ? "\(minutes / 60) h" : "\(minutes / 60) h \(minutes % 60) min"
    }

    /// The x positions in seconds after shortening silences, for times in order.
    public static func timeline(_ times: [Double]) -> [Double] {
        var result: [Double] = []
        result.reserveCapacity(times.count)
        var previous: Double?, position = 0.0
        for time in times {
            if let previous { position += min(longestGap, max(0, time - previous)) }
            result.append(position)
            previous = time
        }
        return result
    }

    /// The SVG document.
    public func svg() -> String {
        // One timeline over every series' times, so they line up.
        let allTimes = Array(Set(estimates.map(\.time) + truth.map(\.time) + baselines.flatMap { $0.points.map(\.time) })).sorted()
        let positions = Dictionary(uniqueKeysWithValues: zip(allTimes, Self.timeline(allTimes)))
        let xMax = max(1, positions[allTimes.last ?? 0] ?? 1)
        let highest = max(truth.map(\.distance).max() ?? 0, estimates.map(\.distance).sorted().dropLast(estimates.count / 50).last ?? 0)
        let yMax = max(4, (highest * 1.2).rounded(.up))
        func x(_ time: Double) -> Double { Self.left + (positions[time] ?? 0) / xMax * Self.width }
        func y(_ metres: Double) -> Double { Self.top + Self.height - min(yMax, max(0, metres)) / yMax * Self.height }
        func f(_ value: Double) -> String { String(format: "%.2f", value) }
        func thin<T>(_ values: [T]) -> [T] {
            let step = max(1, (values.count + Self.mostPoints - 1) / Self.mostPoints)
            return step == 1 ? values : stride(from: 0, to: values.count, by: step).map { values[$0] }
        }
        func polyline(_ name: String, _ points: [Point], style: String) -> String {
            let text = thin(points).map { f(x($0.time)) + "," + f(y($0.distance)) }.joined(separator: " ")
            return "<polyline data-series=\"\(name)\" fill=\"none\" \(style) points=\"\(text)\"/>"
        }

        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1040\" height=\"460\" viewBox=\"0 0 1040 460\" font-family=\"sans-serif\" font-size=\"12\">\n"
        svg += "<title>\(escaped(title))</title>\n<rect width=\"1040\" height=\"460\" fill=\"white\"/>\n"
        svg += "<text x=\"\(f(Self.left))\" y=\"24\" font-size=\"15\">\(escaped(title))</text>\n"
        svg += "<g id=\"plot\" data-left=\"\(f(Self.left))\" data-top=\"\(f(Self.top))\" data-width=\"\(f(Self.width))\" data-height=\"\(f(Self.height))\" data-x-max=\"\(xMax)\" data-y-max=\"\(yMax)\">\n"
        // Zone bands.
        for (name, from, to, colour) in [("immediate", 0, zones.immediate, "#fde2e2"), ("near", zones.immediate, zones.near, "#fff4d6"),
                                         ("far", zones.near, yMax, "#e4f0fb")] where from < yMax {
            svg += "<rect data-zone=\"\(name)\" x=\"\(f(Self.left))\" y=\"\(f(y(to)))\" width=\"\(f(Self.width))\" height=\"\(f(y(from) - y(to)))\" fill=\"\(colour)\"/>\n"
            svg += "<text x=\"\(f(Self.left + Self.width + 4))\" y=\"\(f((y(to) + y(from)) / 2 + 4))\" fill=\"#777\">\(name)</text>\n"
        }
        // Axes and ticks.
        let yStep = yMax <= 6 ? 1.0 : yMax <= 15 ? 2 : yMax <= 40 ? 5 : 10
        for metres in stride(from: 0, through: yMax, by: yStep) {
            svg += "<line x1=\"\(f(Self.left - 4))\" x2=\"\(f(Self.left + Self.width))\" y1=\"\(f(y(metres)))\" y2=\"\(f(y(metres)))\" stroke=\"#ddd\"/>"
            svg += "<text x=\"\(f(Self.left - 8))\" y=\"\(f(y(metres) + 4))\" text-anchor=\"end\">\(Int(metres)) m</text>\n"
        }
        // Time ticks on the shortened timeline: about six, at round durations.
        let xStep = Self.timeSteps.first { xMax / $0 <= 8 } ?? (xMax / 8).rounded(.up)
        for seconds in stride(from: 0, through: xMax, by: xStep) {
            let tx = Self.left + seconds / xMax * Self.width
            svg += "<line x1=\"\(f(tx))\" x2=\"\(f(tx))\" y1=\"\(f(Self.top + Self.height))\" y2=\"\(f(Self.top + Self.height + 4))\" stroke=\"#777\"/>"
            svg += "<text x=\"\(f(tx))\" y=\"\(f(Self.top + Self.height + 16))\" text-anchor=\"middle\" fill=\"#555\">\(Self.duration(seconds))</text>\n"
        }
        svg += "<text x=\"\(f(Self.left + Self.width / 2))\" y=\"\(f(Self.top + Self.height + 32))\" text-anchor=\"middle\">time (silences over \(Int(Self.longestGap)) s shortened; \(Self.duration(xMax)) shown)</text>\n"
        // The interval band: lows forward, highs back.
        let banded = thin(estimates.filter { $0.interval != nil })
        if !banded.isEmpty {
            let forward = banded.map { f(x($0.time)) + "," + f(y($0.interval!.lowerBound)) }
            let back = banded.reversed().map { f(x($0.time)) + "," + f(y($0.interval!.upperBound)) }
            svg += "<polygon data-series=\"interval\" fill=\"#3b6fd8\" fill-opacity=\"0.28\" stroke=\"none\" points=\"\((forward + back).joined(separator: " "))\"/>\n"
        }
        let colours = ["#e08a00", "#2e9e4f", "#9b59b6"]
        for (index, baseline) in baselines.enumerated() {
            svg += polyline(baseline.name, baseline.points, style: "stroke=\"\(colours[index % colours.count])\" stroke-width=\"1\" stroke-dasharray=\"4 3\"") + "\n"
        }
        svg += polyline("nearplay", estimates.map { Point(time: $0.time, distance: $0.distance) }, style: "stroke=\"#1f4fb5\" stroke-width=\"1.5\"") + "\n"
        svg += polyline("truth", truth, style: "stroke=\"black\" stroke-width=\"2\"") + "\n"
        svg += "</g>\n"
        // Legend.
        let legend = [("truth", "black", ""), ("Nearplay (band: interval)", "#1f4fb5", "")]
            + baselines.enumerated().map { ($0.element.name, colours[$0.offset % colours.count], " stroke-dasharray=\"4 3\"") }
        for (index, (name, colour, dash)) in legend.enumerated() {
            let lx = Self.left + Double(index) * 200
            svg += "<line x1=\"\(f(lx))\" x2=\"\(f(lx + 24))\" y1=\"445\" y2=\"445\" stroke=\"\(colour)\" stroke-width=\"2\"\(dash)/>"
            svg += "<text x=\"\(f(lx + 30))\" y=\"449\">\(escaped(name))</text>\n"
        }
        return svg + "</svg>\n"
    }

    private func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
