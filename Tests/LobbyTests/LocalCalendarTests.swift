import Foundation
import Testing
@testable import Lobby

@Suite struct LocalCalendarTests {
    let oslo = LocalCalendar(identifier: "Europe/Oslo")!
    let losAngeles = LocalCalendar(identifier: "America/Los_Angeles")!

    @Test func numbersDatesWeeksAndMonthsTheSameWayEverywhere() {
        #expect(LocalCalendar.day(fromText: "1970-01-01") == 0)
        #expect(LocalCalendar.day(fromText: "2000-03-01") == 11017)
        #expect(LocalCalendar.text(ofDay: 11017) == "2000-03-01")
        #expect(LocalCalendar.text(ofDay: -1) == "1969-12-31")
        for day in stride(from: -800, to: 40000, by: 37) {
            #expect(LocalCalendar.day(fromText: LocalCalendar.text(ofDay: day)) == day)
        }
        // 2027-11-01 is a Monday: its week starts on it; the Sunday before belongs to the week before.
        let monday = LocalCalendar.day(fromText: "2027-11-01")!
        #expect(LocalCalendar.week(ofDay: monday) == monday)
        #expect(LocalCalendar.week(ofDay: monday + 6) == monday)
        #expect(LocalCalendar.week(ofDay: monday - 1) == monday - 7)
        #expect(LocalCalendar.firstDay(ofMonth: LocalCalendar.month(ofDay: monday + 20)) == monday)
        #expect(LocalCalendar.text(ofDay: LocalCalendar.firstDay(ofMonth: LocalCalendar.month(ofDay: monday) + 2)) == "2028-01-01")
        #expect(LocalCalendar.day(fromText: "2027-02-29") == nil)
        #expect(LocalCalendar.day(fromText: "2027-13-01") == nil)
        #expect(LocalCalendar.day(fromText: "27-1-1") == nil)
    }

    /// Ludur grouped in GMT: a game at 23:30 in Los Angeles landed on the next day.
    @Test func aLateEveningGameStaysOnItsLocalDay() {
        let lateEvening = TestLobby.instant("2027-06-16T06:30:00Z") // 23:30 PDT on 15 June
        #expect(LocalCalendar.text(ofDay: losAngeles.day(of: lateEvening)) == "2027-06-15")
        #expect(LocalCalendar.text(ofDay: LocalCalendar.utc.day(of: lateEvening)) == "2027-06-16")
    }

    @Test func daylightSavingDaysLast23And25Hours() {
        let spring = LocalCalendar.day(fromText: "2027-03-28")!
        let autumn = LocalCalendar.day(fromText: "2027-10-31")!
        #expect(oslo.start(ofDay: spring + 1).timeIntervalSince(oslo.start(ofDay: spring)) == 23 * 3600)
        #expect(oslo.start(ofDay: autumn + 1).timeIntervalSince(oslo.start(ofDay: autumn)) == 25 * 3600)
        #expect(oslo.start(ofDay: autumn) == TestLobby.instant("2027-10-30T22:00:00Z"))
        #expect(oslo.start(ofDay: autumn + 1) == TestLobby.instant("2027-10-31T23:00:00Z"))
        // 23:30 on the long day is still that day (CET, UTC+1 again), 00:10 is the next.
        #expect(oslo.day(of: TestLobby.instant("2027-10-31T22:30:00Z")) == autumn)
        #expect(oslo.day(of: TestLobby.instant("2027-10-31T23:10:00Z")) == autumn + 1)
        // 02:30 does not exist on the short day; 01:59 CET and 03:00 CEST are the same day.
        #expect(oslo.day(of: TestLobby.instant("2027-03-28T00:59:00Z")) == spring)
        #expect(oslo.day(of: TestLobby.instant("2027-03-28T21:59:00Z")) == spring)
        #expect(oslo.day(of: TestLobby.instant("2027-03-28T22:00:00Z")) == spring + 1)
    }
}
