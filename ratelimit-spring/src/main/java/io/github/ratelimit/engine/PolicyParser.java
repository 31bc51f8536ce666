package io.github.ratelimit.engine;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarWindow;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.PolicyMode;
import io.github.ratelimit.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelCompilerMode;
import org.springframework.expression.spel.SpelParserConfiguration;
import org.springframework.expression.spel.ast.Literal;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.SimpleEvaluationContext;

/**
 * Builds {@link PolicySpec}s from their sources, the one place where a policy's attributes are read, defaulted and
 * validated: a mistake fails start-up with a message naming where the policy is declared, the attribute and the
 * value. Each attribute is taken from the first source that sets it (a property before the annotation, a plan before
 * the policy).
 * <p>
 * A new attribute is read here, from the name it has in the annotation and the properties (see
 * {@link PolicyValues}), and used where requests are decided.
 */
final class PolicyParser {

	/** The attributes the endpoint shows the source of, in order: {@code burst} of a bucket only, {@code zone} of a
	 * calendar window only. */
	static final List<String> SHOWN = List.of("algorithm", "limit", "window", "zone", "burst", "failure-mode", "mode");

	/**
	 * Attributes that decide nothing here, read into the spec's values by name for the code that uses them
	 * ({@link PolicySpec#value}): their type, as values are converted to.
	 */
	static final Map<String, Class<?>> PASSED_ON = Map.of("description", String.class, "lease", String.class);

	/** Attributes that decide each request (its key, its cost, whether it counts), each shown with its source. */
	static final List<String> PER_REQUEST = List.of("key", "cost", "count-on", "skip", "settle", "tenant", "penalty",
			"penalty-group", "max-wait", "max-queued", "enabled");

	/** The zone of a calendar window no zone is set for. */
	private static final ZoneId UTC = ZoneId.of("UTC");

	/** The attributes a plan changes. */
	private static final List<String> PLANNED = List.of("limit", "window", "burst");

	/** Boot's simple duration format: a whole number and a unit. */
	private static final Pattern SIMPLE_DURATION = Pattern.compile("^([+-]?\\d+)(ns|us|ms|s|m|h|d)$",
			Pattern.CASE_INSENSITIVE);

	private static final EvaluationContext LITERALS = SimpleEvaluationContext.forReadOnlyDataBinding().build();

	private final FailureMode defaultFailureMode;

	private final Consumer<RateLimitPolicy> storeCheck;

	/** Checks a policy whose key every request shares against what the store can count under one key. */
	private final Consumer<RateLimitPolicy> sharedKeyCheck;

	/** By plan, by policy name, what the plan changes. */
	private final Map<String, Map<String, PolicyValues>> plans;

	private final SpelExpressionParser parser = new SpelExpressionParser(
			new SpelParserConfiguration(SpelCompilerMode.MIXED, PolicyParser.class.getClassLoader()));

	PolicyParser(FailureMode defaultFailureMode, Consumer<RateLimitPolicy> storeCheck,
			Consumer<RateLimitPolicy> sharedKeyCheck, Map<String, Map<String, PolicyValues>> plans) {
		this.defaultFailureMode = defaultFailureMode;
		this.storeCheck = storeCheck;
		this.sharedKeyCheck = sharedKeyCheck;
		this.plans = plans;
	}

	/**
	 * Build a policy's spec.
	 * @param name the policy's name
	 * @param where where it is declared, for messages ({@code @RateLimited on OrderController#orders(String)},
	 * {@code ratelimit.filters.edge})
	 * @param property the properties users set it with ({@code ratelimit.policies.orders}), for messages
	 * @param sources its values, the first source that sets an attribute winning
	 * @param parameterNames the names of the method's parameters (none outside a method)
	 * @param parameterTypes their types
	 * @return the spec, or {@code null} if the policy is disabled
	 * @throws InvalidRateLimitPolicyException if a value is invalid
	 */
	@Nullable PolicySpec parse(String name, String where, String property, List<PolicyValues> sources,
			String[] parameterNames, Class<?>[] parameterTypes) {
		PolicySources values = new PolicySources(sources, name, where);
		if (name.startsWith(Penalty.LOCK_PREFIX.substring(0, 1))) {
			throw invalid(name, where, "a policy's name cannot start with '#', kept for the penalty groups' lock-outs");
		}
		if (Boolean.FALSE.equals(values.get("enabled", Boolean.class))) {
			return null;
		}
		Long limit = values.get("limit", Long.class);
		if (limit == null) {
			throw invalid(name, where, "'limit' is not set; set it on the annotation or with '" + property + ".limit'");
		}
		Algorithm algorithm = values.getOrDefault("algorithm", Algorithm.class, Algorithm.FIXED);
		if (algorithm == Algorithm.CONCURRENCY) {
			Concurrency.check(values, name, where);
		}
		else {
			Concurrency.checkNoHold(values, name, where, algorithm);
		}
		Object window = (algorithm == Algorithm.CONCURRENCY) ? Concurrency.hold(values, name, where, property)
				: window(values, name, where, property, zone(values, name, where));
		FailureMode failureMode = values.getOrDefault("failure-mode", FailureMode.class, this.defaultFailureMode);
		PolicyMode mode = values.getOrDefault("mode", PolicyMode.class, PolicyMode.ENFORCE);
		PolicyValues burstSource = values.sourceSetting("burst");
		if (!algorithm.isBucket() && burstSource != null && PolicyValues.RUNTIME.equals(burstSource.source())) {
			// An operator's change that would change nothing must not look applied.
			throw invalid(name, where, "'burst' applies to TOKEN_BUCKET and LEAKY_BUCKET only; " + algorithm
					+ " counts no burst (change 'limit', or the algorithm too)");
		}
		RateLimitPolicy policy;
		try {
			RateLimitPolicy.Builder builder = RateLimitPolicy.builder(name).algorithm(algorithm).limit(limit);
			policy = window(builder, window).burst(values.get("burst", Long.class))
				.failureMode(failureMode)
				.mode(mode)
				.lease(lease(values.getOrDefault("lease", String.class, "").trim()))
				.build();
			this.storeCheck.accept(policy);
		}
		catch (IllegalArgumentException ex) {
			String message = String.valueOf(ex.getMessage());
			throw invalid(name, where, message + values.fromProperty(message), ex);
		}
		String keyExpression = values.getOrDefault("key", String.class, "").trim();
		KeySource key = keySource(keyExpression, name, where, parameterNames, parameterTypes);
		CostSource cost = costSource(values.getOrDefault("cost", String.class, "1").trim(), policy, where, values,
				property);
		CountOn countOn;
		try {
			countOn = CountOn.of(values.getOrDefault("count-on", List.class, List.of()));
		}
		catch (IllegalArgumentException ex) {
			throw invalid(name, where, ex.getMessage() + values.fromProperty("'count-on'"));
		}
		String skip = values.getOrDefault("skip", String.class, "").trim();
		Expression skipExpression = skip.isEmpty() ? null : parse(skip, "skip", name, where);
		String settle = values.getOrDefault("settle", String.class, "").trim();
		Expression settleExpression = settle.isEmpty() ? null : parse(settle, "settle", name, where);
		if (settleExpression != null && !carriesDebt(algorithm)) {
			throw invalid(name, where, "'settle' needs an algorithm that keeps a debt until it is repaid: "
					+ "TOKEN_BUCKET, LEAKY_BUCKET or SLIDING_LOG, not " + algorithm + " (a window forgives what it held "
					+ "beyond its limit when it ends, so a cost settled after the response could exceed the limit "
					+ "every window)" + values.fromProperty("'algorithm'"));
		}
		Penalty penalty = Penalty.parse(values, name, where, policy, keyExpression, key instanceof KeySource.Literal);
		String tenantExpression = values.getOrDefault("tenant", String.class, "").trim();
		KeySource tenant = tenantExpression.isEmpty() ? null
				: keySource(tenantExpression, name, where, parameterNames, parameterTypes);
		Map<String, Map<String, String>> planSources = new LinkedHashMap<>();
		Map<String, RateLimitPolicy> planned = planned(policy, where, planSources);
		if (key instanceof KeySource.Literal) {
			checkSharedKey(policy, where, values, "");
			planned.forEach((plan, variant) -> checkSharedKey(variant, where, values, " under plan '" + plan + "'"));
		}
		Map<String, Object> passedOn = new LinkedHashMap<>();
		PASSED_ON.forEach((attribute, type) -> {
			Object value = values.get(attribute, type);
			if (value != null) {
				passedOn.put(attribute, value);
			}
		});
		return new PolicySpec(policy, declarationOf(where), values.sources(policy), keyExpression, key, cost, countOn,
				skipExpression, tenant, settleExpression, penalty, Waiting.parse(values, name, where, policy, penalty),
				planned, planSources, passedOn, (change) -> {
					change.forEach((layer) -> checkRunTimeChange(name, layer));
					List<PolicyValues> changed = new ArrayList<>(sources.size() + change.size());
					changed.addAll(change);
					changed.addAll(sources);
					return parse(name, where, property, changed, parameterNames, parameterTypes);
				});
	}

	/**
	 * Refuse what an operator's change at run time may not set: an attribute other than those a change counts with,
	 * a window, limit or burst out of the bounds (a typo must not leave keys in the store for years).
	 */
	private static void checkRunTimeChange(String name, PolicyValues layer) {
		if (!PolicyValues.RUNTIME.equals(layer.source())) {
			return;
		}
		for (Map.Entry<String, Object> value : layer.values().entrySet()) {
			String attribute = value.getKey();
			String text = String.valueOf(value.getValue()).trim();
			if (!RuntimeChanges.ATTRIBUTES.contains(attribute)) {
				throw new InvalidRateLimitPolicyException(name, "'" + attribute + "' cannot be changed at run "
						+ "time; only limit, window, burst, algorithm, mode and enabled can");
			}
			Duration window = (attribute.equals("window") && calendarPeriod(text, true) == null) ? parseDuration(text)
					: null;
			if (window != null && (window.compareTo(RuntimeChanges.SHORTEST_WINDOW) < 0
					|| window.compareTo(RuntimeChanges.LONGEST_WINDOW) > 0)) {
				throw new InvalidRateLimitPolicyException(name, "'window' " + text + " is out of bounds: a change "
						+ "may set a window from " + RuntimeChanges.SHORTEST_WINDOW.toSeconds() + "s to "
						+ RuntimeChanges.LONGEST_WINDOW.toDays() + "d");
			}
			if ((attribute.equals("limit") || attribute.equals("burst")) && text.matches("[+-]?\\d{1,18}")) {
				long units = Long.parseLong(text);
				if (units < 1 || units > RuntimeChanges.MOST_UNITS) {
					throw new InvalidRateLimitPolicyException(name, "'" + attribute + "' " + units + " is out of "
							+ "bounds: a change may set it from 1 to " + RuntimeChanges.MOST_UNITS);
				}
			}
		}
	}

	/** A lease as written: {@code auto}, a number of units, or empty for none. */
	private static long lease(String lease) {
		if (lease.isEmpty()) {
			return 0;
		}
		if (lease.equalsIgnoreCase("auto")) {
			return RateLimitPolicy.LEASE_AUTO;
		}
		try {
			long units = Long.parseLong(lease);
			if (units < 1) {
				throw new NumberFormatException();
			}
			return units;
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException("'lease' must be 'auto' or a number of units of at least 1 but was '"
					+ lease + "'");
		}
	}

	private void checkSharedKey(RateLimitPolicy policy, String where, PolicySources values, String plan) {
		try {
			this.sharedKeyCheck.accept(policy);
		}
		catch (IllegalArgumentException ex) {
			String message = ex.getMessage() + plan;
			throw invalid(policy.name(), where, message + values.fromProperty("'limit'"), ex);
		}
	}

	/** The policy as each plan that changes it has it, checked like the policy itself. */
	private Map<String, RateLimitPolicy> planned(RateLimitPolicy policy, String where,
			Map<String, Map<String, String>> planSources) {
		Map<String, RateLimitPolicy> planned = new LinkedHashMap<>();
		this.plans.forEach((plan, changes) -> {
			PolicyValues change = changes.get(policy.name());
			if (change == null) {
				return;
			}
			PolicySources values = new PolicySources(List.of(change), policy.name(), where);
			Long limit = values.get("limit", Long.class);
			Long burst = values.get("burst", Long.class);
			CalendarWindow calendar = policy.calendar();
			Object window = (calendar != null) ? calendar : policy.window();
			Object planWindow = change.get("window");
			if (planWindow != null && policy.algorithm() == Algorithm.CONCURRENCY) {
				throw invalid(policy.name(), where, "'window' does not apply to CONCURRENCY: a plan changes its limit "
						+ "(from " + change.source() + ")");
			}
			if (planWindow != null) {
				// A plan's 1d, 1w or 1M follows the policy's zone; any other window of it counts from the epoch.
				CalendarWindow.Period period = calendarPeriod(planWindow.toString().trim(), calendar != null);
				window = (period != null) ? CalendarWindow.of(period, (calendar != null) ? calendar.zone() : UTC)
						: window(values, policy.name(), where, change.source(), null);
			}
			try {
				RateLimitPolicy variant = window(policy.toBuilder(), window)
					.variant(plan)
					.limit((limit != null) ? limit : policy.limit())
					// A burst left at the limit follows a plan's limit; one set apart is kept.
					.burst((burst != null) ? burst
							: (policy.burst() != policy.limit() || limit == null) ? policy.burst() : null)
					.build();
				this.storeCheck.accept(variant);
				planned.put(plan, variant);
			}
			catch (IllegalArgumentException ex) {
				throw invalid(policy.name(), where, ex.getMessage() + " (from " + change.source() + ")", ex);
			}
			Map<String, String> sources = new LinkedHashMap<>();
			for (String attribute : PLANNED) {
				if (!attribute.equals("burst") || policy.algorithm().isBucket()) {
					sources.put(attribute, (change.get(attribute) != null) ? change.sourceOf(attribute) : "policy");
				}
			}
			planSources.put(plan, Collections.unmodifiableMap(sources));
		});
		return Collections.unmodifiableMap(planned);
	}

	private static RateLimitPolicy.Builder window(RateLimitPolicy.Builder builder, Object window) {
		return (window instanceof CalendarWindow calendar) ? builder.window(calendar)
				: builder.window((Duration) window);
	}

	private static @Nullable ZoneId zone(PolicySources values, String name, String where) {
		Object value = values.raw("zone");
		if (value == null || value instanceof ZoneId) {
			return (ZoneId) value;
		}
		String text = value.toString().trim();
		try {
			return text.isEmpty() ? null : ZoneId.of(text);
		}
		catch (DateTimeException ex) {
			throw invalid(name, where, "'zone' must be a time zone such as Europe/Berlin or UTC but was '" + text + "'"
					+ values.fromProperty("'zone'"), ex);
		}
	}

	/** The window as written: a {@link Duration}, or a {@link CalendarWindow} in the zone (UTC if none is set). */
	private static Object window(PolicySources values, String name, String where, String property,
			@Nullable ZoneId zone) {
		Object value = values.raw("window");
		if (value == null) {
			throw invalid(name, where, "'window' is not set; set it on the annotation or with '" + property + ".window'");
		}
		String text = value.toString().trim();
		CalendarWindow.Period period = calendarPeriod(text, zone != null);
		if (period != null) {
			return CalendarWindow.of(period, (zone != null) ? zone : UTC);
		}
		if (text.matches("\\d+M")) {
			throw invalid(name, where, "'window' '" + text + "' is not a window: an upper-case M is a calendar month, "
					+ "and a calendar window is 1M; write minutes with a lower-case m"
					+ values.fromProperty("'window'"));
		}
		PolicyValues source = values.sourceSetting("window");
		String from = (source != null) ? source.source() : PolicyValues.ANNOTATION;
		// A run-time change or a tenant's limits may set a window counted from the epoch over a declared zone.
		if (zone != null && !from.equals(PolicyValues.RUNTIME) && !from.startsWith("tenant ")) {
			throw invalid(name, where, "'zone' " + zone + " applies to a calendar window (1d, 1w or 1M), not to '"
					+ text + "'" + values.fromProperty("'zone'"));
		}
		if (value instanceof Duration duration) {
			return duration;
		}
		if (text.matches("\\d{1,12}") && !from.equals(PolicyValues.ANNOTATION) && !from.equals(PolicyValues.RUNTIME)) {
			// A property without a unit is in seconds, as Boot binds durations.
			return Duration.ofSeconds(Long.parseLong(text));
		}
		if (text.chars().allMatch(Character::isDigit)) {
			throw invalid(name, where, "'window' must have a unit (ms, s, m, h, d) or be ISO-8601 (PT1M) but was '"
					+ text + "'" + values.fromProperty("'window'"));
		}
		Duration window = parseDuration(text);
		if (window == null) {
			throw invalid(name, where, "'window' must be a duration such as 500ms, 30s, 1m, 1h, 1d or PT1M but was '"
					+ text + "'" + values.fromProperty("'window'"));
		}
		return window;
	}

	/**
	 * The calendar period a window is written as: {@code 1M} or {@code P1M} (a month, upper-case), {@code 1w} or
	 * {@code P1W}, and when a zone is set {@code 1d} or {@code P1D} (without one, {@code 1d} keeps its meaning of 24
	 * hours from midnight UTC). {@code null} for any other window.
	 */
	static CalendarWindow.@Nullable Period calendarPeriod(String text, boolean zoned) {
		return switch (text) {
			case "1M", "P1M" -> CalendarWindow.Period.MONTH;
			case "1w", "P1W" -> CalendarWindow.Period.WEEK;
			case "1d", "P1D" -> zoned ? CalendarWindow.Period.DAY : null;
			default -> null;
		};
	}

	/** Boot's two duration formats: simple ({@code 30s}) and ISO-8601 ({@code PT30S}). */
	static @Nullable Duration parseDuration(String text) {
		Matcher simple = SIMPLE_DURATION.matcher(text);
		try {
			if (simple.matches()) {
				long amount = Long.parseLong(simple.group(1));
				return switch (simple.group(2).toLowerCase(Locale.ROOT)) {
					case "ns" -> Duration.ofNanos(amount);
					case "us" -> Duration.ofNanos(Math.multiplyExact(amount, 1_000L));
					case "ms" -> Duration.ofMillis(amount);
					case "s" -> Duration.ofSeconds(amount);
					case "m" -> Duration.ofMinutes(amount);
					case "h" -> Duration.ofHours(amount);
					default -> Duration.ofDays(amount);
				};
			}
			return Duration.parse(text);
		}
		catch (ArithmeticException | NumberFormatException | DateTimeParseException ex) {
			return null;
		}
	}

	private KeySource keySource(String expression, String name, String where, String[] parameterNames,
			Class<?>[] parameterTypes) {
		if (expression.isEmpty() || expression.equals("#clientIp")) {
			return new KeySource.ClientIp();
		}
		if (expression.startsWith("#")) {
			String variable = expression.substring(1);
			int index = Arrays.asList(parameterNames).indexOf(variable);
			// #request and #principal always mean the request and its principal, even if a parameter has the name.
			if (index >= 0 && !variable.equals("request") && !variable.equals("principal")) {
				Class<?> type = parameterTypes[index];
				if (!KeyText.mayHaveText(type)) {
					throw invalid(name, where, "'key' " + expression + " is a " + type.getTypeName()
							+ ", whose text is not its value; a key must be " + KeyText.ALLOWED
							+ " (name a property of it, such as " + expression + ".id)");
				}
				return new KeySource.Argument(index);
			}
		}
		Expression parsed = parse(expression, "key", name, where);
		if (parsed instanceof SpelExpression spel && spel.getAST() instanceof Literal) {
			return new KeySource.Literal(parsed.getValue(LITERALS));
		}
		return new KeySource.Spel(parsed);
	}

	private CostSource costSource(String cost, RateLimitPolicy policy, String where, PolicySources values, String property) {
		if (cost.matches("[+-]?\\d+")) {
			long value;
			try {
				value = Long.parseLong(cost);
			}
			catch (NumberFormatException ex) {
				throw invalid(policy.name(), where, "'cost' is too large: '" + cost + "'");
			}
			if (value < 1) {
				throw invalid(policy.name(), where, "'cost' must be at least 1 but was " + value);
			}
			if (value > policy.capacity()) {
				String of = policy.algorithm().isBucket() ? "burst" : "limit";
				boolean configured = policy.algorithm().isBucket()
						? (values.isConfigured("burst") || values.isConfigured("limit")) : values.isConfigured("limit");
				throw invalid(policy.name(), where, "'cost' of " + value + " exceeds the " + of + " of "
						+ policy.capacity() + ((configured) ? " (configured under " + property + ")" : "")
						+ ", so no request could ever pass");
			}
			return new CostSource.Constant(value);
		}
		return new CostSource.Spel(parse(cost, "cost", policy.name(), where));
	}

	private Expression parse(String expression, String attribute, String name, String where) {
		try {
			return this.parser.parseExpression(expression);
		}
		catch (ParseException | IllegalStateException ex) {
			throw invalid(name, where, "'" + attribute + "' is not a valid SpEL expression '" + expression + "': "
					+ ex.getMessage(), ex);
		}
	}

	/** Whether an algorithm keeps what a request took beyond the limit until it is repaid (see RateLimitStore#charge). */
	static boolean carriesDebt(Algorithm algorithm) {
		return algorithm.isBucket() || algorithm == Algorithm.SLIDING_LOG;
	}

	/** The method of an annotation's declaration, or the property of a configured one. */
	static String declarationOf(String where) {
		return where.startsWith("@RateLimited on ") ? where.substring("@RateLimited on ".length()) : where;
	}

	/** A property path's segment for a policy name: bracketed when the name has a dot. */
	static String bracketed(String name) {
		return name.contains(".") ? "[" + name + "]" : name;
	}

	static InvalidRateLimitPolicyException invalid(String name, String where, String problem) {
		return new InvalidRateLimitPolicyException(name, where + ": " + problem);
	}

	private static InvalidRateLimitPolicyException invalid(String name, String where, String problem,
			Throwable cause) {
		return new InvalidRateLimitPolicyException(name, where + ": " + problem, cause);
	}

}
