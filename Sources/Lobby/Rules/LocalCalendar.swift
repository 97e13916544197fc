import Foundation
import Synchronization

/// Days, weeks and months in one player's time zone, as plain numbers the store can index.
///
/// Times are stored in UTC; a result belongs to the day on which it happened where the player was
/// (its IANA zone), so a game at 23:30 in Oslo counts on that Oslo day, not on the next UTC one.
/// A day is numbered by its local calendar date: days since 1970-01-01 (1970-01-01 is day 0),
/// whatever the zone, so the same number means the same date everywhere. A week is named by the
/// number of its Monday (ISO weeks start on Monday); a month by `year * 12 + month - 1`.
/// Daylight-saving changes only move where a day starts and ends in UTC (a day can last 23 or 25
/// hours); the numbering does not care.
public struct LocalCalendar: Sendable {
    public let zone: TimeZone
    /// The zone's name as the player gave it (Foundation on Linux calls UTC "GMT").
    public let name: String
    private let calendar: Calendar

    public init(zone: TimeZone, name: String? = nil) {
        self.zone = zone
        self.name = name ?? zone.identifier
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        self.calendar = calendar
    }

    /// The zone named `identifier` (IANA, e.g. `Europe/Oslo`), nil when the system does not know it.
    public init?(identifier: String) {
        guard let zone = TimeZone(identifier: identifier) else { return nil }
        self.init(zone: zone, name: identifier)
    }

    public static let utc = LocalCalendar(zone: TimeZone(identifier: "UTC")!, name: "UTC")

    /// The calendar of zone `identifier`, made once per zone: making a `TimeZone` reads its file.
    public static func named(_ identifier: String) -> LocalCalendar? {
        if let known = cache.withLock({ $0[identifier] }) { return known }
        guard let calendar = LocalCalendar(identifier: identifier) else { return nil }
        cache.withLock { cache in
            if cache.count >= 1024 { cache.removeAll() }
            cache[identifier] = calendar
        }
        return calendar
    }

    private static let cache = Mutex<[String: LocalCalendar]>([:])

    /// The number of the local date `date` falls on.
    public func day(of date: Date) -> Int {
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return Self.dayNumber(year: parts.year!, month: parts.month!, day: parts.day!)
    }

    /// The first instant of local day `day` (midnight, or the first instant after a gap at midnight).
    public func start(ofDay day: Int) -> Date {
        let (year, month, dayOfMonth) = Self.civil(day)
        let noon = calendar.date(from: DateComponents(year: year, month: month, day: dayOfMonth, hour: 12))!
        return calendar.startOfDay(for: noon)
    }

    /// The Monday of the ISO week holding `day`.
    public static func week(ofDay day: Int) -> Int {
        // Day 0 (1970-01-01) was a Thursday, weekday 3 counting Monday as 0.
        day - (((day + 3) % 7) + 7) % 7
    }

    /// `year * 12 + month - 1` of the month holding `day`.
    public static func month(ofDay day: Int) -> Int {
        let (year, month, _) = civil(day)
        return year * 12 + month - 1
    }

    /// The first day of month `month` (as ``month(ofDay:)`` numbers them).
    public static func firstDay(ofMonth month: Int) -> Int {
        let year = month >= 0 ? month / 12 : (month - 11) / 12
        return dayNumber(year: year, month: month - year * 12 + 1, day: 1)
    }

    /// `YYYY-MM-DD` of day `day`.
    public static func text(ofDay day: Int) -> String {
        let (year, month, dayOfMonth) = civil(day)
        return String(format: "%04d-%02d-%02d", year, month, dayOfMonth)
    }

    /// The day a `YYYY-MM-DD` text names, nil when it is no such date.
    public static func day(fromText text: String) -> Int? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        let number = dayNumber(year: year, month: month, day: day)
        return civil(number) == (year, month, day) ? number : nil
    }

    // Howard Hinnant's days_from_civil and civil_from_days (proleptic Gregorian calendar).
    static func dayNumber(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146097 + dayOfEra - 719468
    }

    static func civil(_ number: Int) -> (year: Int, month: Int, day: Int) {
        let z = number + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let dayOfEra = z - era * 146097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
