import LobbyClient

/// A small text chart of wins and losses per day, for `nearplay stats`: one column a day, oldest
/// first, bars in eighths of a character cell (▁ to █) scaled to the busiest day, a blank for none.
///
/// ```
/// won   ▁  █ ▄            ▂      3 max
/// lost    ▄   ▁ █                2 max
///       2026-10-25 … 2026-11-23
/// ```
public enum ResultsChart {
    static let bars: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    /// The chart's lines (no trailing newline); empty days count as no results.
    public static func lines(_ days: [PlayerStatistics.Day]) -> [String] {
        let most = max(1, days.map { max($0.wins, $0.losses) }.max() ?? 0)
        func row(_ label: String, _ value: (PlayerStatistics.Day) -> Int) -> String {
            let cells = days.map { day -> Character in
                let count = value(day)
                guard count > 0 else { return " " }
                return bars[min(bars.count - 1, (count * bars.count - 1) / most)]
            }
            let peak = days.map(value).max() ?? 0
            return label + String(cells) + "  " + (peak > 0 ? "\(peak) max" : "none")
        }
        var lines = [row("won   ", \.wins), row("lost  ", \.losses)]
        if let first = days.first, let last = days.last {
            lines.append("      \(first.day) … \(last.day)")
        }
        return lines
    }
}
