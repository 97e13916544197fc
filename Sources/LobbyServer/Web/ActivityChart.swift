import Foundation
import Lobby

/// The player page's 30-day chart as inline SVG: one column per local day, wins rising from the
/// middle line, losses hanging below it, draws stacked on the wins. Drawn on the server (no
/// script, no image request); its title and description say in words what it shows.
enum ActivityChart {
    static func svg(_ days: [PlayerStatistics.Day]) -> String {
        let width = 600.0, height = 170.0, middle = 75.0, reach = 62.0
        let step = width / Double(max(days.count, 1)), bar = max(step - 4, 2)
        let peak = Double(max(1, days.map { max($0.wins + $0.draws, $0.losses) }.max() ?? 1))
        func number(_ value: Double) -> String { String(format: "%.1f", value) }
        var shapes: [String] = []
        for (index, day) in days.enumerated() {
            let x = Double(index) * step + 2
            let wins = Double(day.wins) / peak * reach, draws = Double(day.draws) / peak * reach
            let losses = Double(day.losses) / peak * reach
            if day.wins > 0 {
                shapes.append(#"<rect class="win" x="\#(number(x))" y="\#(number(middle - wins))" width="\#(number(bar))" height="\#(number(wins))"/>"#)
            }
            if day.draws > 0 {
                shapes.append(#"<rect class="draw" x="\#(number(x))" y="\#(number(middle - wins - draws))" width="\#(number(bar))" height="\#(number(draws))"/>"#)
            }
            if day.losses > 0 {
                shapes.append(#"<rect class="loss" x="\#(number(x))" y="\#(number(middle))" width="\#(number(bar))" height="\#(number(losses))"/>"#)
            }
        }
        let wins = days.reduce(0) { $0 + $1.wins }, losses = days.reduce(0) { $0 + $1.losses }
        let draws = days.reduce(0) { $0 + $1.draws }
        let first = days.first?.day ?? "", last = days.last?.day ?? ""
        let labelY = number(height - 6)
        return #"""
            <svg id="chart" viewBox="0 0 \#(Int(width)) \#(Int(height))" role="img" aria-labelledby="chart-title chart-description" xmlns="http://www.w3.org/2000/svg">
            <title id="chart-title">Games won and lost per day</title>
            <desc id="chart-description">From \#(escape(first)) to \#(escape(last)): \#(wins) won (green, above the line), \#(losses) lost (red, below), \#(draws) drawn (grey).</desc>
            <line class="axis" x1="0" y1="\#(number(middle))" x2="\#(Int(width))" y2="\#(number(middle))"/>
            \#(shapes.joined(separator: "\n"))
            <text x="2" y="\#(labelY)">\#(escape(first))</text>
            <text x="\#(Int(width) - 2)" y="\#(labelY)" text-anchor="end">\#(escape(last))</text>
            </svg>
            """#
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
