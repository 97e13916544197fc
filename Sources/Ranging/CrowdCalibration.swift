import Foundation

/// Calibration from the readings devices take of each other: each device's transmit and receive
/// offsets and each site's path-loss exponent, with the standard errors that say what the
/// readings pinned down and what only the prior holds.
///
/// Device A hears B at `r_AB = P_B + t_B + g_A − 10 n log10(d) − S + ε` (``TwoWayRanging``'s
/// model, with `S` the path's lasting shadowing, the same both ways). With `y_AB = r_AB − P_B`,
/// `s = t + g` and `u = t − g`:
/// - `y_AB − y_BA = u_B − u_A`: distance and shadowing cancel, so every exchange pins the
///   difference of two devices' `t − g`, whatever the distance;
/// - `y_AB + y_BA = s_A + s_B − 20 n log10(d) − 2S`: with a known distance (location beacons whose
///   owner entered where they stand) it pins `s_A + s_B` and `n`; with an unknown one it says
///   nothing, unless everyone mingles alike, in which case each pair's mean loss is the crowd's
///   (a free parameter per site) within `τ` dB and the sums pin `s_A − s_B`.
///
/// So readings alone never pin: `t + k, g − k` for every device at once (no reading changes; the
/// prior fixes it, and it cancels in every reading's bias `t_B + g_A`); without known distances
/// or an anchor (a device whose offsets are known), the common mode of `s` (everyone reading 3 dB
/// low is everyone standing farther apart) and the exponent. The prior (the defaults: offsets
/// `0 ± 6` dB, exponent `2.8 ± 0.5`) holds those, and the standard errors say so. Location
/// beacons at known spots pin the exponent and their own `s`, not the players' (no player
/// distance is known). `Benchmarks/crowd-calibration.py` shows each case in numbers.
///
/// The fit is linear least squares on pair-level statistics (one difference per pair and site;
/// one sum per pair where a distance is known or both are mingling players), with the prior as
/// extra equations, solved through the normal equations (Cholesky) and reweighted with Huber
/// weights until the weights settle, then with bisquare weights from there, so a pair that reads
/// far off its model counts little and one that reads very far off not at all. The offset priors
/// of devices not anchored yield the same way (Huber on the prior's spread), so one device far
/// out (or a player reading everyone 20 dB high) does not drag the level all devices share; the
/// mingling spread is estimated from the median of the sums' squared residuals, so a few pairs
/// far off do not inflate it and hide behind it. So is each site's lasting shadowing `S` from its
/// known-distance equations (``Options/knownDistanceShadowing``): assumed at the prior's 6 dB, it
/// held five beacons' exponent to ±0.35 in any room, over the 0.3 agents accept, where a room
/// without lasting shadowing pins it to ±0.19; four beacons leave one degree of freedom, too few
/// to estimate from, and keep the prior's.
/// Cost: O(exchanges) to aggregate plus O(p³) for p = 2·devices + 2·sites parameters: well under
/// a millisecond for tens of devices.
public enum CrowdCalibration {
    /// What a device is: players move, location beacons stand still.
    public enum DeviceKind: String, Sendable, Hashable, Codable {
        case player
        case locationBeacon = "location-beacon"
    }

    /// A device in the solve, and what is known of its offsets before it.
    public struct Device: Sendable, Hashable {
        public var id: String
        public var kind: DeviceKind
        /// Offsets known from elsewhere (dB): an anchor, e.g. a beacon calibrated by a walk. Nil
        /// takes the prior's `0 ± offsetSpread` for both.
        public var known: KnownOffsets?

        public init(id: String, kind: DeviceKind = .player, known: KnownOffsets? = nil) {
            self.id = id
            self.kind = kind
            self.known = known
        }
    }

    /// A device's offsets as known before the solve, with their standard deviation (dB).
    public struct KnownOffsets: Sendable, Hashable {
        public var transmit: Double
        public var receive: Double
        public var spread: Double

        public init(transmit: Double, receive: Double, spread: Double = 0.5) {
            self.transmit = transmit
            self.receive = receive
            self.spread = spread
        }
    }

    /// Two devices' readings of each other over one path at one moment (either may be missing),
    /// at a site, with the distance when it is known (m).
    ///
    /// Each reading is a ``TwoWayRanging/Direction``: the RSSI heard (dBm, a raw reading or a
    /// filter's estimate), the measured power the other advertised (dBm), and the reading's
    /// variance (dB²: 16 for a raw reading in 4 dB of noise, the filter's variance for a filtered
    /// one). Give the variance: its default of 0 would make the reading exact.
    public struct Exchange: Sendable, Hashable {
        public var first: String
        public var second: String
        public var firstHearsSecond: TwoWayRanging.Direction?
        public var secondHearsFirst: TwoWayRanging.Direction?
        public var distance: Double?
        public var site: String

        public init(first: String, second: String, firstHearsSecond: TwoWayRanging.Direction?, secondHearsFirst: TwoWayRanging.Direction?,
                    distance: Double? = nil, site: String = "") {
            self.first = first
            self.second = second
            self.firstHearsSecond = firstHearsSecond
            self.secondHearsFirst = secondHearsFirst
            self.distance = distance
            self.site = site
        }
    }

    /// How far one pair of mingling players' mean path loss may stray from the crowd's (dB).
    public enum Mingling: Sendable, Hashable {
        /// Do not assume the players mingle: unknown distances give differences only.
        case ignored
        /// This many dB.
        case spread(Double)
        /// From the sums' own residuals (method of moments), at least `floor` dB: a pair effect
        /// cannot see a device that keeps to one corner, which looks exactly like its `t + g`.
        case estimated(floor: Double)
    }

    /// The lasting shadowing of one path between devices at a known distance (`S`, dB): the part
    /// of a known-distance equation's variance that no number of readings over that path averages
    /// away, and so what bounds how well a few beacons pin the exponent.
    public enum Shadowing: Sendable, Hashable {
        /// `prior.shadowing` at every site.
        case fixed
        /// From the known-distance equations' own residuals (method of moments, as the mingling
        /// spread), at least `floor` dB; `prior.shadowing` at a site where fewer than 3 degrees of
        /// freedom are left (equations less the devices in them less the exponent: four beacons'
        /// 6 pairs leave 1, five beacons' 10 leave 4). The floor keeps a site whose few pairs
        /// happen to agree from claiming its exponent to a hundredth: no real path is free of it.
        case estimated(floor: Double)
    }

    public struct Options: Sendable, Hashable {
        /// The defaults the solve starts from: exponent 2.8 ± 0.5, offsets 0 ± 6 dB, and the
        /// lasting shadowing of one path at a known distance (`shadowing`, 6 dB: what
        /// `knownDistanceShadowing` uses when fixed, or where too few pairs estimate it).
        public var prior = SitePrior()
        public var mingling = Mingling.estimated(floor: 1)
        /// Mingling spread used when too few pairs mingle to estimate one (dB).
        public var fallbackMinglingSpread = 3.0
        /// The lasting shadowing the known-distance equations allow for. A fixed 6 dB (the prior's)
        /// gives five beacons' exponent a standard error of 0.35, over what agents accept (0.3),
        /// even in a room with no lasting shadowing, where estimated it is 0.19 (the room's own
        /// pairs say how much; `nearplay-air-bench crowd-beacons`). Four beacons are too few to
        /// estimate it from and keep the prior's (0.37).
        public var knownDistanceShadowing = Shadowing.estimated(floor: 1)
        /// What the two directions of one path may differ by beyond the offsets (dB): a floor
        /// under each pair's difference, so hundreds of readings do not make it exact.
        public var asymmetry = 1.0
        /// Residuals beyond this many standard deviations are downweighted (Huber); `.infinity`
        /// gives plain least squares.
        public var huberThreshold = 1.5
        /// Once the Huber weights settle, bisquare (Tukey) weights take over from that answer:
        /// residuals beyond this many standard deviations get no weight at all. Huber alone bounds
        /// a bad pair's pull but does not remove it (a beacon pair's 20 dB error still moved the
        /// others by 0.7 dB in `anOutlierPairDoesNotMoveTheAnswer`). `.infinity` keeps Huber's.
        public var rejectionThreshold = 4.685
        public var maximumIterations = 60

        public init() {}
    }

    /// A parameter of the solve.
    public enum Parameter: Sendable, Hashable {
        case transmit(String)
        case receive(String)
        case exponent(site: String)
        /// The mean path loss between mingling players at a site (dB).
        case crowdLoss(site: String)
    }

    /// A device's offsets after the solve (dB) and their standard errors.
    public struct DeviceOffsets: Sendable, Hashable {
        public var transmit: Double
        public var receive: Double
        public var transmitError: Double
        public var receiveError: Double
        /// The standard error of `transmit + receive`, which one-way ranging with this device at
        /// both ends needs; smaller than either alone would suggest when they are correlated.
        public var sumError: Double
    }

    /// A site's exponent after the solve and its standard error.
    public struct SiteExponent: Sendable, Hashable {
        public var exponent: Double
        public var exponentError: Double
        /// The mingling spread the solve used at this site (dB), nil where no players mingled.
        public var minglingSpread: Double?
        /// The lasting shadowing per path the solve used at this site's known distances (dB):
        /// estimated, or `prior.shadowing`; nil where no distance was known.
        public var shadowing: Double?
    }

    /// The solve's answer.
    public struct Solution: Sendable {
        public var devices: [String: DeviceOffsets]
        public var sites: [String: SiteExponent]
        /// Reweighting rounds, and how many of the pair equations ended counted at less than half.
        public var iterations: Int
        public var downweighted: Int
        public var equations: Int
        let index: [Parameter: Int]
        let covariance: [Double]
        let estimate: [Double]

        /// The posterior mean and standard error of `Σ weight · parameter`.
        public func combination(_ terms: [(Parameter, Double)]) -> (value: Double, standardError: Double)? {
            var indices: [(Int, Double)] = []
            for (parameter, weight) in terms {
                guard let i = index[parameter] else { return nil }
                indices.append((i, weight))
            }
            let p = estimate.count
            var value = 0.0, variance = 0.0
            for (i, wi) in indices {
                value += wi * estimate[i]
                for (j, wj) in indices { variance += wi * wj * covariance[i * p + j] }
            }
            return (value, max(0, variance).squareRoot())
        }

        /// What `listener`'s reading of `speaker` reads above the model (`t_speaker + g_listener`,
        /// dB): subtract it from the RSSI before ranging. Nil for a device the solve did not see.
        public func readingOffset(listener: String, speaker: String) -> (value: Double, standardError: Double)? {
            combination([(.transmit(speaker), 1), (.receive(listener), 1)])
        }
    }

    /// Solves for every device's offsets and every site's exponent from `exchanges`.
    /// Exchanges naming a device not in `devices` are left out.
    public static func solve(devices: [Device], exchanges: [Exchange], options: Options = Options()) -> Solution {
        var index: [Parameter: Int] = [:]
        var kinds: [String: DeviceKind] = [:]
        for device in devices where kinds[device.id] == nil {
            kinds[device.id] = device.kind
            index[.transmit(device.id)] = index.count
            index[.receive(device.id)] = index.count
        }
        let sites = Array(Set(exchanges.map(\.site))).sorted()
        for site in sites {
            index[.exponent(site: site)] = index.count
            index[.crowdLoss(site: site)] = index.count
        }
        let p = index.count

        // Pair-level statistics.
        struct PairKey: Hashable {
            var first: String, second: String, site: String, distance: Double?
        }
        struct PairStatistics {
            var forward = Moments(), reverse = Moments()   // first hears second; second hears first
            var difference = Moments(), sum = Moments()    // of exchanges with both directions
        }
        var pairs: [PairKey: PairStatistics] = [:]
        for exchange in exchanges where exchange.first != exchange.second {
            guard kinds[exchange.first] != nil, kinds[exchange.second] != nil else { continue }
            let swap = exchange.first > exchange.second
            let key = PairKey(first: swap ? exchange.second : exchange.first, second: swap ? exchange.first : exchange.second,
                              site: exchange.site, distance: exchange.distance.map { max($0, PathLoss.nearest) })
            let forward = swap ? exchange.secondHearsFirst : exchange.firstHearsSecond
            let reverse = swap ? exchange.firstHearsSecond : exchange.secondHearsFirst
            var statistics = pairs[key] ?? PairStatistics()
            if let forward { statistics.forward.add(forward.filteredRSSI - forward.measuredPower, variance: forward.filterVariance) }
            if let reverse { statistics.reverse.add(reverse.filteredRSSI - reverse.measuredPower, variance: reverse.filterVariance) }
            if let forward, let reverse {
                let a = forward.filteredRSSI - forward.measuredPower, b = reverse.filteredRSSI - reverse.measuredPower
                statistics.difference.add(a - b, variance: forward.filterVariance + reverse.filterVariance)
                statistics.sum.add(a + b, variance: forward.filterVariance + reverse.filterVariance)
            }
            pairs[key] = statistics
        }

        // Equations: sparse rows (parameter index, coefficient), value, the readings' variance, and
        // which site spread adds to it; with the devices each spread's equations involve.
        var equations: [Equation] = []
        var spreadEquations: [SiteSpread: (members: [Int], devices: Set<String>)] = [:]
        for (key, statistics) in pairs.sorted(by: { ($0.key.first, $0.key.second, $0.key.site) < ($1.key.first, $1.key.second, $1.key.site) }) {
            let a = key.first, b = key.second
            let tA = index[.transmit(a)]!, gA = index[.receive(a)]!, tB = index[.transmit(b)]!, gB = index[.receive(b)]!
            let still = kinds[a] == .locationBeacon && kinds[b] == .locationBeacon
            let exponent = index[.exponent(site: key.site)]!, crowd = index[.crowdLoss(site: key.site)]!
            // y_ab − y_ba = (t_b − g_b) − (t_a − g_a). Between still devices (or at a known distance)
            // the path is one, so each direction's mean may come from different moments.
            let difference: (value: Double, variance: Double)?
            if (still || key.distance != nil), let forward = statistics.forward.mean, let reverse = statistics.reverse.mean {
                difference = (forward.value - reverse.value, forward.variance + reverse.variance)
            } else {
                difference = statistics.difference.mean
            }
            if let difference {
                equations.append(Equation(terms: [(tB, 1), (gB, -1), (tA, -1), (gA, 1)], value: difference.value,
                                          variance: difference.variance + options.asymmetry * options.asymmetry, kind: .difference))
            }
            let written = equations.count   // the sum (or one-way reading) below, if any
            if let distance = key.distance {
                let x = 10 * log10(distance)
                let forward = statistics.forward.mean, reverse = statistics.reverse.mean
                if let forward, let reverse {
                    // y_ab + y_ba = s_a + s_b − 20 n log10 d − 2S: S twice, so 4S² is added.
                    equations.append(Equation(terms: [(tA, 1), (gA, 1), (tB, 1), (gB, 1), (exponent, -2 * x)],
                                              value: forward.value + reverse.value, variance: forward.variance + reverse.variance,
                                              kind: .knownDistance(site: key.site, factor: 4)))
                } else if let forward {
                    equations.append(Equation(terms: [(tB, 1), (gA, 1), (exponent, -x)], value: forward.value,
                                              variance: forward.variance, kind: .knownDistance(site: key.site, factor: 1)))
                } else if let reverse {
                    equations.append(Equation(terms: [(tA, 1), (gB, 1), (exponent, -x)], value: reverse.value,
                                              variance: reverse.variance, kind: .knownDistance(site: key.site, factor: 1)))
                }
            } else if kinds[a] == .player, kinds[b] == .player, options.mingling != .ignored, let sum = statistics.sum.mean {
                // y_ab + y_ba = s_a + s_b − 2c, c the crowd's mean loss; τ is added below.
                equations.append(Equation(terms: [(tA, 1), (gA, 1), (tB, 1), (gB, 1), (crowd, -2)], value: sum.value,
                                          variance: sum.variance, kind: .mingling(site: key.site)))
            }
            if equations.count > written, let spread = equations[written].kind.spread?.spread {
                spreadEquations[spread, default: ([], [])].members.append(written)
                spreadEquations[spread, default: ([], [])].devices.formUnion([a, b])
            }
        }

        // Priors: offsets 0 ± offsetSpread (or what is known), the exponent, and a weak crowd loss.
        var priorMean = [Double](repeating: 0, count: p), priorPrecision = [Double](repeating: 0, count: p)
        // The offset priors of devices not known beforehand yield (Huber, on the prior's own
        // spread) where the readings put a device far out: a device 20 dB off (or a player who
        // reads everyone 20 dB off) would otherwise pull the level every device shares (which only
        // the prior holds) by a decibel or more.
        var yielding: [Int] = []
        var priorWeights = [Double](repeating: 1, count: p)
        for device in devices {
            guard let t = index[.transmit(device.id)], let g = index[.receive(device.id)] else { continue }
            let spread = device.known?.spread ?? options.prior.offsetSpread
            priorMean[t] = device.known?.transmit ?? 0
            priorMean[g] = device.known?.receive ?? 0
            priorPrecision[t] = 1 / (spread * spread)
            priorPrecision[g] = 1 / (spread * spread)
            if device.known == nil { yielding.append(contentsOf: [t, g]) }
        }
        for site in sites {
            let n = index[.exponent(site: site)]!, c = index[.crowdLoss(site: site)]!
            priorMean[n] = options.prior.exponent
            priorPrecision[n] = 1 / (options.prior.exponentSpread * options.prior.exponentSpread)
            // Mingling players are mostly 1–5 m apart: 10·2.8·log10(2.5) ≈ 11 dB, ± a loose 50.
            priorMean[c] = 11
            priorPrecision[c] = 1 / (50 * 50)
        }

        // τ and S per site: fixed, or estimated from their equations' residuals (starting from the
        // fallback, which stays where too few equations are left over to estimate from).
        var spreads: [SiteSpread: Double] = [:]
        var estimated: [(spread: SiteSpread, members: [Int], freedom: Int, floor: Double)] = []
        for (spread, (members, devices)) in spreadEquations {
            let setting: (start: Double, floor: Double?)
            switch spread {
            case .mingling:
                switch options.mingling {
                case .ignored: continue   // (no mingling equations are written then)
                case let .spread(value): setting = (value, nil)
                case let .estimated(floor): setting = (options.fallbackMinglingSpread, floor)
                }
            case .shadowing:
                switch options.knownDistanceShadowing {
                case .fixed: setting = (options.prior.shadowing, nil)
                case let .estimated(floor): setting = (options.prior.shadowing, floor)
                }
            }
            spreads[spread] = setting.start
            // Fitted to these equations: each device's t + g and the site's crowd loss or exponent.
            let freedom = members.count - devices.count - 1
            if let floor = setting.floor, freedom >= 3 { estimated.append((spread, members, freedom, floor)) }
        }

        var weights = [Double](repeating: 1, count: equations.count)
        var rejecting = false
        var estimate = priorMean
        var cholesky: [Double] = []
        var iterations = 0
        while iterations < options.maximumIterations {
            iterations += 1
            var normal = [Double](repeating: 0, count: p * p)
            var right = [Double](repeating: 0, count: p)
            for i in 0..<p {
                normal[i * p + i] = priorWeights[i] * priorPrecision[i]
                right[i] = priorWeights[i] * priorPrecision[i] * priorMean[i]
            }
            for (e, equation) in equations.enumerated() {
                let w = weights[e] / equation.variance(spreads: spreads)
                for (i, ci) in equation.terms {
                    right[i] += w * ci * equation.value
                    for (j, cj) in equation.terms { normal[i * p + j] += w * ci * cj }
                }
            }
            guard let factor = Self.cholesky(normal, size: p) else { break }
            cholesky = factor
            estimate = Self.solve(cholesky: factor, size: p, right: right)

            var residuals = [Double](repeating: 0, count: equations.count)
            for (e, equation) in equations.enumerated() {
                residuals[e] = equation.value - equation.terms.reduce(0) { $0 + $1.1 * estimate[$1.0] }
            }
            var changed = false
            for (spread, members, freedom, floor) in estimated {
                // Each residual's square over the share of its variance the fit left it (1 − its
                // leverage), so that each estimates its whole variance. Mingling sums are many
                // (thousands; one leverage costs O(p²)) and their average share, freedom over
                // equations, serves. A site's known distances are few, and the prior pins part of
                // what they fit, so each gets its own: the average overstated five beacons' 4 dB of
                // shadowing as 5.4 dB (median of 40 rooms of CrowdCalibrationTests' world), its own
                // leverage as 4.3.
                let members = members.compactMap { e -> (square: Double, equation: Equation)? in
                    let left: Double
                    switch spread {
                    case .mingling:
                        left = Double(freedom) / Double(members.count)
                    case .shadowing:
                        let precision = weights[e] / equations[e].variance(spreads: spreads)
                        left = 1 - precision * Self.quadraticForm(cholesky: cholesky, size: p, terms: equations[e].terms)
                    }
                    return left > 1e-6 ? (residuals[e] * residuals[e] / left, equations[e]) : nil
                }
                let value = max(floor, Self.momentSpread(members))
                if abs(value - (spreads[spread] ?? 0)) > 1e-3 { changed = true }
                spreads[spread] = value
            }
            for (e, equation) in equations.enumerated() {
                let z = abs(residuals[e]) / equation.variance(spreads: spreads).squareRoot()
                let weight: Double
                if rejecting {
                    let r = z / options.rejectionThreshold
                    weight = r < 1 ? (1 - r * r) * (1 - r * r) : 0
                } else {
                    weight = z <= options.huberThreshold ? 1 : options.huberThreshold / z
                }
                if abs(weight - weights[e]) > 1e-4 { changed = true }
                weights[e] = weight
            }
            for i in yielding where options.huberThreshold.isFinite {
                let z = abs(estimate[i] - priorMean[i]) * priorPrecision[i].squareRoot()
                let weight = z <= options.huberThreshold ? 1 : options.huberThreshold / z
                if abs(weight - priorWeights[i]) > 1e-4 { changed = true }
                priorWeights[i] = weight
            }
            if !changed {
                guard !rejecting, options.rejectionThreshold.isFinite, options.huberThreshold.isFinite else { break }
                rejecting = true
                changed = true
            }
        }

        let covariance = cholesky.isEmpty ? [Double](repeating: 0, count: p * p) : Self.inverse(cholesky: cholesky, size: p)
        var solution = Solution(devices: [:], sites: [:], iterations: iterations, downweighted: weights.filter { $0 < 0.5 }.count,
                                equations: equations.count, index: index, covariance: covariance, estimate: estimate)
        for id in kinds.keys {
            let t = index[.transmit(id)]!, g = index[.receive(id)]!
            solution.devices[id] = DeviceOffsets(
                transmit: estimate[t], receive: estimate[g],
                transmitError: covariance[t * p + t].squareRoot(), receiveError: covariance[g * p + g].squareRoot(),
                sumError: max(0, covariance[t * p + t] + covariance[g * p + g] + 2 * covariance[t * p + g]).squareRoot())
        }
        for site in sites {
            let n = index[.exponent(site: site)]!
            solution.sites[site] = SiteExponent(exponent: estimate[n], exponentError: covariance[n * p + n].squareRoot(),
                                                minglingSpread: spreads[.mingling(site: site)], shadowing: spreads[.shadowing(site: site)])
        }
        return solution
    }

    /// A spread the solve holds per site, fixed or estimated, whose square adds to the variance of
    /// some equations there (dB).
    enum SiteSpread: Hashable {
        /// τ: how far a mingling pair's mean loss strays from the crowd's.
        case mingling(site: String)
        /// S: a path's lasting shadowing, in the equations at a known distance.
        case shadowing(site: String)
    }

    /// A linear equation on the parameters, with its readings' variance; its kind says which site
    /// spread adds to that, and how many times its square.
    struct Equation {
        enum Kind: Equatable {
            /// `y_AB − y_BA`: distance and lasting shadowing cancel, so nothing is added.
            case difference
            /// At a known distance: `factor · S²`, 4 for a two-direction sum (which holds `S` twice),
            /// 1 for one direction alone.
            case knownDistance(site: String, factor: Double)
            /// A mingling sum: `4τ²` (each direction strays by `τ`, the same way).
            case mingling(site: String)

            var spread: (spread: SiteSpread, factor: Double)? {
                switch self {
                case .difference: nil
                case let .knownDistance(site, factor): (.shadowing(site: site), factor)
                case let .mingling(site): (.mingling(site: site), 4)
                }
            }
        }

        var terms: [(Int, Double)]
        var value: Double
        var variance: Double
        var kind: Kind

        /// The whole variance: the readings' own plus the site spread's share.
        func variance(spreads: [SiteSpread: Double]) -> Double {
            guard let spread = kind.spread, let value = spreads[spread.spread] else { return variance }
            return variance + spread.factor * value * value
        }
    }

    /// The spread `s` for which equations of variance `variance + factor · s²` leave these squared
    /// residuals, each already divided by the share of its variance the fit left it (method of
    /// moments; 0 where the readings' own variance explains them). `E[r²]` comes from the median of
    /// the squares (0.4549 for a normal residual), not their mean: a few equations far off (one
    /// liar's pairs, one beacon behind a wall) would otherwise inflate the spread, so weaken every
    /// equation alike and hide themselves from the robust weights.
    static func momentSpread(_ members: [(square: Double, equation: Equation)]) -> Double {
        guard !members.isEmpty else { return 0 }
        let squares = members.map(\.square).sorted()
        let middle = squares.count / 2
        let median = squares.count.isMultiple(of: 2) ? (squares[middle - 1] + squares[middle]) / 2 : squares[middle]
        let meanSquare = median / 0.4549
        let base = members.reduce(0) { $0 + $1.equation.variance } / Double(members.count)
        let factor = members.reduce(0) { $0 + ($1.equation.kind.spread?.factor ?? 0) } / Double(members.count)
        return max(0, (meanSquare - base) / factor).squareRoot()
    }

    /// Running sums for a mean and its variance.
    struct Moments {
        var count = 0
        var total = 0.0
        var varianceTotal = 0.0

        mutating func add(_ value: Double, variance: Double) {
            count += 1
            total += value
            varianceTotal += variance
        }

        /// The mean and the variance of the mean (readings taken as independent).
        var mean: (value: Double, variance: Double)? {
            count > 0 ? (total / Double(count), varianceTotal / Double(count * count)) : nil
        }
    }

    /// The lower-triangular `L` with `L·Lᵀ = matrix` (row-major, `size × size`); nil when the
    /// matrix is not positive definite (it always is here: every parameter has a prior).
    static func cholesky(_ matrix: [Double], size n: Int) -> [Double]? {
        var l = [Double](repeating: 0, count: n * n)
        for i in 0..<n {
            for j in 0...i {
                var sum = matrix[i * n + j]
                for k in 0..<j { sum -= l[i * n + k] * l[j * n + k] }
                if i == j {
                    guard sum > 0 else { return nil }
                    l[i * n + i] = sum.squareRoot()
                } else {
                    l[i * n + j] = sum / l[j * n + j]
                }
            }
        }
        return l
    }

    /// `x` with `L·Lᵀ·x = right`.
    static func solve(cholesky l: [Double], size n: Int, right: [Double]) -> [Double] {
        var y = right
        for i in 0..<n {
            for k in 0..<i { y[i] -= l[i * n + k] * y[k] }
            y[i] /= l[i * n + i]
        }
        for i in stride(from: n - 1, through: 0, by: -1) {
            for k in (i + 1)..<n { y[i] -= l[k * n + i] * y[k] }
            y[i] /= l[i * n + i]
        }
        return y
    }

    /// `xᵀ(L·Lᵀ)⁻¹x` for a sparse row `x` (`terms`): the squared length of `L⁻¹x`, by forward
    /// substitution from its first nonzero entry.
    static func quadraticForm(cholesky l: [Double], size n: Int, terms: [(Int, Double)]) -> Double {
        var z = [Double](repeating: 0, count: n)
        for (i, coefficient) in terms { z[i] += coefficient }
        let start = terms.map(\.0).min() ?? n
        var total = 0.0
        for i in start..<n {
            for k in start..<i { z[i] -= l[i * n + k] * z[k] }
            z[i] /= l[i * n + i]
            total += z[i] * z[i]
        }
        return total
    }

    /// `(L·Lᵀ)⁻¹`, column by column.
    static func inverse(cholesky l: [Double], size n: Int) -> [Double] {
        var inverse = [Double](repeating: 0, count: n * n)
        var unit = [Double](repeating: 0, count: n)
        for column in 0..<n {
            unit[column] = 1
            let x = solve(cholesky: l, size: n, right: unit)
            unit[column] = 0
            for row in 0..<n { inverse[row * n + column] = x[row] }
        }
        return inverse
    }
}
