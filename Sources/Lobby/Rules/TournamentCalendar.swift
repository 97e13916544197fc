import Foundation

/// The windows a location's tournaments run in: a calendar day, a week from Monday 00:00, a
/// calendar month, each in the location's own time zone (so a daily tournament at a café in
/// Reykjavik and one in Sydney both run midnight to midnight where they are). A window is
/// half-open: it contains its start, not its end, which is the next window's start. On a day
/// that a daylight-saving change shortens or lengthens, the window is that 23 or 25 hours long.
public struct TournamentCalendar: Sendable {
    public let timeZone: TimeZone
    private let calendar: Calendar

    public init(timeZone: TimeZone) {
        self.timeZone = timeZone
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        calendar.firstWeekday = 2  // Monday
        calendar.minimumDaysInFirstWeek = 4  // ISO 8601 weeks
        self.calendar = calendar
    }

    /// The time zone called `identifier` (an IANA name such as Europe/Oslo), or nil.
    public init?(identifier: String) {
        guard let zone = TimeZone(identifier: identifier) else { return nil }
        self.init(timeZone: zone)
    }

    /// The window of `period` that contains `time`.
    public func window(_ period: TournamentPeriod, containing time: Date) -> (start: Date, end: Date) {
        let component: Calendar.Component = switch period {
        case .daily: .day
        case .weekly: .weekOfYear
        case .monthly: .month
        }
        // `dateInterval(of:for:)` gives the whole unit in this calendar's zone and first weekday.
        guard let interval = calendar.dateInterval(of: component, for: time) else {
            // Only a calendar that cannot represent `time` at all gets here; fall back to UTC days.
            let start = Date(timeIntervalSince1970: (time.timeIntervalSince1970 / 86400).rounded(.down) * 86400)
            return (start, start.addingTimeInterval(86400))
        }
        return (interval.start, interval.end)
    }
}
