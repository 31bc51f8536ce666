package io.github.ratelimit.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.PolicyMode;

/**
 * Limits how often the annotated method may be invoked, per key. On a class, applies to every handler method of the
 * class (every public method if the class is not a controller); an annotation on a method replaces the one on its
 * class.
 * <p>
 * Every attribute but {@link #key()} and {@link #cost()} can be overridden in configuration by policy name:
 * {@code ratelimit.policies.<name>.limit}, {@code .window}, {@code .algorithm}, {@code .burst}, {@code .enabled},
 * {@code .failure-mode}. Names containing dots are written in brackets there:
 * {@code ratelimit.policies.[OrderController.list].limit}.
 * <p>
 * Repeatable: several policies on one method are checked in declaration order, and the request is rejected by the
 * first that rejects it (the policies before it have counted it). Their names must differ. Can be used as a
 * meta-annotation to compose your own.
 *
 * <pre class="code">
 * &#064;RateLimited(limit = 10, window = "1m", key = "#userId")
 * &#064;GetMapping("/users/{userId}/orders")
 * List&lt;Order&gt; orders(&#064;PathVariable String userId) { ... }
 * </pre>
 *
 * @since 0.1.0
 */
@Target({ ElementType.METHOD, ElementType.TYPE, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Repeatable(RateLimits.class)
public @interface RateLimited {

	/**
	 * Value of {@link #limit()} and {@link #burst()} meaning "not set here".
	 */
	long UNSET = Long.MIN_VALUE;

	/**
	 * Policy name. Counters are namespaced by it: two methods share counters only if they name the same policy, and
	 * then they must declare the same limit, window, algorithm and burst. Defaults to
	 * {@code SimpleClassName.methodName}.
	 * @return the policy name
	 */
	String name() default "";

	/**
	 * Maximum number of units per {@link #window()} (for the bucket algorithms, the refill or drain rate per window).
	 * Required here or in {@code ratelimit.policies.<name>.limit}.
	 * @return the limit, at least 1
	 */
	long limit() default UNSET;

	/**
	 * Window length, in Spring Boot's duration syntax ({@code 500ms}, {@code 30s}, {@code 1m}, {@code 1h},
	 * {@code 1d}) or ISO-8601 ({@code PT1M}); or a calendar window of {@link Algorithm#FIXED} or
	 * {@link Algorithm#SLIDING_COUNTER}: {@code 1M} (a month, upper-case {@code M}), {@code 1w} (a week from
	 * Monday), and with a {@link #zone()} {@code 1d} (a day from midnight), which start on calendar boundaries in the
	 * zone (UTC when none is set). Required here or in {@code ratelimit.policies.<name>.window}.
	 * @return the window
	 */
	String window() default "";

	/**
	 * Time zone whose calendar a window of {@code 1d}, {@code 1w} or {@code 1M} follows ({@code Europe/Berlin},
	 * {@code UTC}): windows start at its midnights, of their real length (days of 23 or 25 hours where daylight
	 * saving time changes, months of 28 to 31 days). Empty (the default): a day is 24 hours from midnight UTC, and
	 * weeks and months follow UTC. {@code ratelimit.policies.<name>.zone} overrides it.
	 * @return the zone's id, or empty
	 * @since 0.5.0
	 */
	String zone() default "";

	/**
	 * Algorithm that enforces the limit.
	 * @return the algorithm
	 */
	Algorithm algorithm() default Algorithm.FIXED;

	/**
	 * Capacity of the bucket for {@link Algorithm#TOKEN_BUCKET} and {@link Algorithm#LEAKY_BUCKET}: how many units can
	 * pass at once after an idle period. Defaults to the limit; ignored by the window algorithms.
	 * @return the burst, at least 1
	 */
	long burst() default UNSET;

	/**
	 * SpEL expression for the counter key, evaluated per request. It can use the method's arguments by name
	 * ({@code #userId}), {@code #request} (the current {@code HttpServletRequest}), {@code #principal} (the
	 * authenticated principal, {@code null} when anonymous) and beans ({@code @plans.tier(#request)}). Defaults to
	 * the client's IP address. A key that evaluates to {@code null} or an empty string, or whose evaluation fails,
	 * falls back to the client's IP address (logged once per policy at WARN).
	 * @return the key expression
	 */
	String key() default "";

	/**
	 * Units one request takes: an integer, or a SpEL expression evaluated per request with the same variables as
	 * {@link #key()}. A request whose cost exceeds what is left is rejected and takes nothing.
	 * @return the cost, at least 1
	 */
	String cost() default "1";

	/**
	 * Which outcomes count: HTTP status codes ({@code 401}) or classes ({@code 4xx}, {@code 5xx}) of the response
	 * the method produces. The limit is checked before the method runs; the unit is kept if the outcome matches and
	 * given back otherwise. {@code countOn = "401"} on a login endpoint counts failed logins only. The status is that
	 * of a returned {@code ResponseEntity}, of a thrown exception ({@code ErrorResponse}, {@code @ResponseStatus},
	 * else 500), or else the method's {@code @ResponseStatus} or 200. Empty (the default): every admitted request
	 * counts. {@code ratelimit.policies.<name>.count-on} overrides it.
	 * @return the status codes or classes that count
	 * @since 0.2.0
	 */
	String[] countOn() default {};

	/**
	 * A SpEL condition, over the same variables as {@link #key()}: when it is {@code true}, this policy neither
	 * counts nor limits the request. Empty (the default): never skipped. {@code ratelimit.policies.<name>.skip}
	 * overrides it.
	 * @return the condition
	 * @since 0.2.0
	 */
	String skip() default "";

	/**
	 * A SpEL expression, over the same variables as {@link #key()}, {@code #result} (what the method returned) and
	 * {@code #reported} (what the handler reported through {@code RateLimitStatus.settle}, or {@code null}), giving
	 * what the request really cost once it is served, when that is known only then (tokens generated, rows
	 * exported): {@link #cost()} is reserved before the method runs, and when it returns the reservation is settled
	 * to this, giving back what was reserved beyond it, or taking the extra whatever the key has left (it may go into
	 * debt, so that its next requests wait until it is repaid; the request that was served never fails). Empty (the
	 * default): the cost is what was reserved; so is it when the expression yields {@code null}, fails or yields no
	 * whole number (logged). A method that throws keeps its reservation.
	 * {@code ratelimit.policies.<name>.settle} overrides it.
	 * @return the settle expression
	 * @since 0.3.0
	 */
	String settle() default "";

	/**
	 * A SpEL expression, over the same variables as {@link #key()}, naming the tenant the request is for: with a
	 * {@code TenantLimitsSource} bean, the policy's limits for that tenant come from it (a tenant's own limit,
	 * window, burst, algorithm or mode, looked up and cached), and each tenant with limits of its own counts apart.
	 * Empty (the default), or a request whose tenant is {@code null}: the policy's own limits.
	 * {@code ratelimit.policies.<name>.tenant} overrides it.
	 * @return the tenant expression
	 * @since 0.3.0
	 */
	String tenant() default "";

	/**
	 * Whether the policy rejects, or only reports what it would have rejected; {@code ratelimit.policies.<name>.mode}
	 * overrides it.
	 * @return the mode
	 * @since 0.2.0
	 */
	PolicyMode mode() default PolicyMode.ENFORCE;

	/**
	 * What the limit is for, in words, for the people who operate the application: the actuator endpoint shows it
	 * next to the policy's values. It changes nothing in how the policy counts. Empty (the default): none.
	 * {@code ratelimit.policies.<name>.description} overrides it.
	 * @return the description
	 * @since 0.2.0
	 */
	String description() default "";

	/**
	 * Lock a key out once it breaks this policy, for this long ({@code 15m}, {@code 1h}, {@code PT1H}; at most 31
	 * days): a request of the key that this policy rejects, or with {@link #countOn()} the counted request that uses
	 * its last unit (the fifth failed login of five), locks the key out of every policy of its
	 * {@link #penaltyGroup()}, on every instance sharing the store. While locked out, each of its requests is
	 * rejected with {@code 429}, {@code Retry-After} saying when the lock ends and the problem type
	 * {@code abnormal-usage-detected}, from this instance's deny cache where it can, without a store call. An
	 * operator unlocks a key by resetting it through the actuator endpoint. Empty (the default): no lock-out.
	 * {@code ratelimit.policies.<name>.penalty} overrides it.
	 * @return the lock-out's duration, or empty
	 * @since 0.5.0
	 */
	String penalty() default "";

	/**
	 * The penalty group this policy's keys are locked out of, and checked against: every policy naming a group
	 * rejects the keys locked out of it, whichever policy of the group locked them. Empty (the default): the
	 * policy's own name when it has a {@link #penalty()}, else none. {@code ratelimit.policies.<name>.penalty-group}
	 * overrides it.
	 * @return the group's name, or empty
	 * @since 0.5.0
	 */
	String penaltyGroup() default "";

	/**
	 * Let a request over the limit wait for its turn rather than be rejected, when its turn comes within this long
	 * ({@code 500ms}, {@code 2s}; at most a minute): a bucket reserves the request's future tokens in the same store
	 * call, so waiting requests pass in the order they came, at the bucket's rate; a window's request waits until
	 * the window has room and is decided once more. Up to {@link #maxQueued()} requests of a key wait at once on an
	 * instance; beyond either bound the request is rejected as without it. On Spring MVC the request's thread waits
	 * (on virtual threads no platform thread does); on WebFlux nothing blocks. Empty (the default): no waiting.
	 * {@code ratelimit.policies.<name>.max-wait} overrides it.
	 * @return the longest wait, or empty
	 * @since 0.5.0
	 */
	String maxWait() default "";

	/**
	 * How many requests of a key may wait for their turn at once on one instance ({@link #maxWait()}), from 1 to
	 * 10,000; the next is rejected at once. Defaults to 20. {@code ratelimit.policies.<name>.max-queued} overrides it.
	 * @return the most waiting requests per key
	 * @since 0.5.0
	 */
	long maxQueued() default UNSET;

	/**
	 * For {@link Algorithm#CONCURRENCY}, which takes it instead of a {@link #window()}: how long a slot stays taken
	 * when its request never gives it back (an instance that died mid-request), in Spring Boot's duration syntax
	 * ({@code 30s}, {@code 5m}; at most a day). It must be longer than the longest request: one that runs longer has
	 * its slot free for another request before it ends, and is logged at WARN. Empty (the default): a minute.
	 * {@code ratelimit.policies.<name>.hold} overrides it.
	 * @return the hold, or empty
	 * @since 0.5.0
	 */
	String hold() default "";

	/**
	 * Lease the key's units a block at a time, in front of a shared store (Redis, DynamoDB): each instance takes a
	 * block in one store call and admits from it without a round trip, so a hot key costs a store call per block
	 * rather than per request. The fleet never admits more than the limit; it may admit less while other instances
	 * hold units they have not used, at most {@code (instances - 1) × block} per window. {@code "auto"} sizes each
	 * instance's blocks from the rate it admits the key at (up to a sixteenth of the limit or burst); a number fixes
	 * the block. Not for {@link Algorithm#SLIDING_LOG}. Empty (the default): no lease.
	 * {@code ratelimit.policies.<name>.lease} overrides it.
	 * @return {@code "auto"}, a number of units, or empty
	 * @since 0.3.0
	 */
	String lease() default "";

}
