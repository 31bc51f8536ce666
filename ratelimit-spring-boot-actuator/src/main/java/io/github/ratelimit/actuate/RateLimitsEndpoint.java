package io.github.ratelimit.actuate;

import java.security.Principal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.engine.HeavyHitters;
import io.github.ratelimit.engine.InvalidRateLimitPolicyException;
import io.github.ratelimit.engine.PolicyCatalog;
import io.github.ratelimit.engine.PolicyCatalogSummary;
import io.github.ratelimit.engine.PolicySpec;
import io.github.ratelimit.engine.RateLimitLockouts;
import io.github.ratelimit.engine.RuntimeChanges;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.web.HandlerMethods;
import io.github.ratelimit.store.RateLimitStoreException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * The {@code ratelimits} actuator endpoint. Reads: every policy with its effective configuration and where each value
 * came from, and the store; one key's state under one policy, without taking a unit. Delete: reset one key of one
 * policy (its counters in the store, the in-memory fallback and the deny cache), to unblock a client. Write: change how
 * a policy counts from now on ({@code limit}, {@code window}, {@code burst}, {@code algorithm}, {@code mode},
 * {@code enabled}), each value checked as at start-up and shown with the source {@code runtime}; delete the policy's
 * change to go back to its configuration. Each change is logged with who made it and the values before and
 * after, and at WARN. A change is refused (400, naming the value) outside the bounds of {@link RuntimeChanges}.
 * <p>
 * Read-only unless granted ({@code management.endpoint.ratelimits.access=unrestricted}), and, like every endpoint but
 * health, not exposed over HTTP unless listed in {@code management.endpoints.web.exposure.include}. Keys are shown
 * and read as its {@link KeyDisplay} says: by default addresses masked and other keys as a keyed fingerprint.
 *
 * @since 0.1.0
 */
@Endpoint(id = "ratelimits", defaultAccess = Access.READ_ONLY)
public class RateLimitsEndpoint {

	private static final Log logger = LogFactory.getLog(RateLimitsEndpoint.class);

	private final PolicyCatalog catalog;

	private final RateLimiter rateLimiter;

	private final RuntimeChanges changes;

	private final @Nullable HeavyHitters heavyHitters;

	private final KeyDisplay keys;

	private final @Nullable HandlerMethods handlers;

	private final @Nullable RateLimitLockouts lockouts;

	/**
	 * Create an endpoint whose changes apply to this instance alone, without heavy hitters.
	 * @param catalog the declared policies
	 * @param rateLimiter the limiter
	 */
	public RateLimitsEndpoint(PolicyCatalog catalog, RateLimiter rateLimiter) {
		this(catalog, rateLimiter, new RuntimeChanges(catalog, null), null, KeyDisplay.fingerprinted(null), null);
	}

	/**
	 * Create an endpoint.
	 * @param catalog the declared policies
	 * @param rateLimiter the limiter
	 * @param changes where changes go: to every instance sharing the store, or this one alone
	 * @param heavyHitters the heaviest keys of each policy, shown by a policy's read, or {@code null}
	 * @param keys how keys are shown and read: fingerprinted, or raw where granted
	 * @param handlers the web stack's handler methods, whose unlimited ones the read lists, or {@code null}
	 * @since 0.4.0
	 */
	public RateLimitsEndpoint(PolicyCatalog catalog, RateLimiter rateLimiter, RuntimeChanges changes,
			@Nullable HeavyHitters heavyHitters, KeyDisplay keys, @Nullable HandlerMethods handlers) {
		this(catalog, rateLimiter, changes, heavyHitters, keys, handlers, null);
	}

	/**
	 * Create an endpoint that lists the keys locked out of penalty groups, and unlocks them with a key's reset.
	 * @param catalog the declared policies
	 * @param rateLimiter the limiter
	 * @param changes where changes go: to every instance sharing the store, or this one alone
	 * @param heavyHitters the heaviest keys of each policy, shown by a policy's read, or {@code null}
	 * @param keys how keys are shown and read: fingerprinted, or raw where granted
	 * @param handlers the web stack's handler methods, whose unlimited ones the read lists, or {@code null}
	 * @param lockouts the lock-outs of the penalty groups, or {@code null}
	 * @since 0.5.0
	 */
	public RateLimitsEndpoint(PolicyCatalog catalog, RateLimiter rateLimiter, RuntimeChanges changes,
			@Nullable HeavyHitters heavyHitters, KeyDisplay keys, @Nullable HandlerMethods handlers,
			@Nullable RateLimitLockouts lockouts) {
		this.lockouts = lockouts;
		this.catalog = catalog;
		this.rateLimiter = rateLimiter;
		this.changes = changes;
		this.heavyHitters = heavyHitters;
		this.keys = keys;
		this.handlers = handlers;
	}

	/**
	 * Describe the store and every policy.
	 * @return the description
	 */
	@ReadOperation
	public RateLimitsDescriptor rateLimits() {
		List<PolicyDescriptor> policies = this.catalog.policies()
			.stream()
			.map((spec) -> describe(spec, false))
			.toList();
		return new RateLimitsDescriptor(this.rateLimiter.store().getClass().getSimpleName(), policies,
				this.changes.storedChanges(),
				(this.handlers != null) ? PolicyCatalogSummary.unlimited(this.catalog, this.handlers) : List.of(),
				lockedOut());
	}

	private List<LockedOutDescriptor> lockedOut() {
		if (this.lockouts == null) {
			return List.of();
		}
		long now = this.rateLimiter.store().currentTimeMillis();
		return this.lockouts.lockedOut()
			.stream()
			.map((locked) -> new LockedOutDescriptor(locked.group(), locked.policy(), this.keys.show(locked.key()),
					Math.max(1, (locked.untilEpochMillis() - now + 999) / 1000)))
			.toList();
	}

	/**
	 * Describe one policy, with its heaviest keys of the last few minutes: those with the most rejected and the most
	 * admitted requests.
	 * @param policy the policy's name
	 * @return the description, or {@code null} (404) for an unknown policy
	 */
	@ReadOperation
	public @Nullable PolicyDescriptor policy(@Selector String policy) {
		PolicySpec declared = this.catalog.policy(policy);
		return (declared != null) ? describe(declared, true) : null;
	}

	/**
	 * Read one key's state under a policy without taking a unit or keeping anything (an unknown key is not
	 * inserted, so a read never evicts another key of the in-memory store). A policy that plans change is read under each of
	 * them too: a client of a plan is counted by its plan's variant, apart from the policy as declared.
	 * @param policy the policy's name
	 * @param keyPath the key as the policy's heaviest keys show it (its fingerprint, or its masked address), or, only
	 * where raw keys are shown, as the limiter sees it (the key expression's value, or the client's address; an IPv6
	 * network's {@code /} is a path separator, so the rest of the path is the key)
	 * @return the state, or {@code null} (404) for an unknown policy; a key not among the heaviest is a bad request
	 * (400) unless raw keys are shown, so that a read is no oracle of which keys are live
	 */
	@ReadOperation
	public @Nullable KeyDescriptor key(@Selector String policy,
			@Selector(match = Selector.Match.ALL_REMAINING) String[] keyPath) {
		String shown = keyOf(policy, keyPath);
		PolicySpec declared = this.catalog.policy(policy);
		if (declared == null) {
			return null;
		}
		String key = this.keys.keyOf(shown, heaviestKeys(policy));
		if (key == null) {
			throw new InvalidEndpointRequestException("'" + shown + "' is not one of the heaviest keys of policy '"
					+ policy + "' as shown; a key is read by its value only with ratelimit.heavy-hitters.show-keys=true "
					+ "and management.endpoint.ratelimits.access=unrestricted", "Key not shown");
		}
		RateLimitPolicy limit = declared.policy();
		Map<String, KeyState> plans = new LinkedHashMap<>();
		declared.plans().forEach((plan, variant) -> plans.put(plan, state(variant, key)));
		KeyState state = state(limit, key);
		return new KeyDescriptor(limit.name(), this.keys.show(key), state.limit(), state.remaining(), state.resetAfterSeconds(),
				this.rateLimiter.isCircuitOpen(limit, key), plans);
	}

	/**
	 * Change how a policy counts from now on, over its configuration: the values given replace those of an earlier
	 * change. A changed limit or burst keeps the policy's counts (a window's count, a bucket's level clamped to the
	 * new burst); a changed window or algorithm counts from fresh state.
	 * @param securityContext who asks, for the log
	 * @param policy the policy's name
	 * @param limit the limit, or {@code null} to keep it
	 * @param window the window ({@code 30s}, {@code 1m}, {@code PT1H}), or {@code null} to keep it
	 * @param burst the burst of the bucket algorithms, or {@code null} to keep it
	 * @param algorithm the algorithm ({@code fixed}, {@code token-bucket}, ...), or {@code null} to keep it
	 * @param mode {@code enforce} or {@code shadow}, or {@code null} to keep it
	 * @param enabled whether the policy applies, or {@code null} to keep it
	 * @return the policy as it now counts; an unknown policy is a bad request (400)
	 * @since 0.3.0
	 */
	@WriteOperation
	public @Nullable PolicyDescriptor change(SecurityContext securityContext, @Selector String policy,
			@Nullable Long limit, @Nullable String window, @Nullable Long burst, @Nullable String algorithm,
			@Nullable String mode, @Nullable Boolean enabled) {
		Map<String, String> values = new LinkedHashMap<>();
		put(values, "limit", limit);
		put(values, "window", window);
		put(values, "burst", burst);
		put(values, "algorithm", algorithm);
		put(values, "mode", mode);
		put(values, "enabled", enabled);
		if (values.isEmpty()) {
			throw new InvalidEndpointRequestException("Nothing to change: give at least one of limit, window, burst, "
					+ "algorithm, mode, enabled", "Nothing to change");
		}
		return apply(securityContext, policy, values);
	}

	private static void put(Map<String, String> values, String attribute, @Nullable Object value) {
		if (value != null && !value.toString().isBlank()) {
			values.put(attribute, value.toString().trim());
		}
	}

	/**
	 * Drop the change made at run time to a policy: it counts as configured again.
	 * @param securityContext who asks, for the log
	 * @param policy the policy's name
	 * @return the policy as it now counts; an unknown policy is a bad request (400)
	 * @since 0.3.0
	 */
	@DeleteOperation
	public @Nullable PolicyDescriptor dropChange(SecurityContext securityContext, @Selector String policy) {
		return apply(securityContext, policy, Map.of());
	}

	private @Nullable PolicyDescriptor apply(SecurityContext securityContext, String name, Map<String, String> change) {
		PolicySpec before = this.catalog.policy(name);
		if (before == null) {
			// A write answering nothing would be a 204, which a script takes for success.
			throw new InvalidEndpointRequestException("No rate limit policy '" + name + "'; known policies: "
					+ String.join(", ", this.catalog.names()), "Unknown policy");
		}
		String old = summary(before);
		Principal principal = securityContext.getPrincipal();
		String author = (principal != null) ? principal.getName() : "an anonymous caller";
		try {
			this.changes.change(name, change, author);
		}
		catch (InvalidRateLimitPolicyException ex) {
			// The reason is what the 400 says: it names the attribute and the value.
			String message = String.valueOf(ex.getMessage());
			throw new InvalidEndpointRequestException(message, message);
		}
		catch (RateLimitStoreException ex) {
			throw new InvalidEndpointRequestException("The store could not keep the change, so nothing changed on any "
					+ "instance: " + ex.getMessage(), "Store unavailable");
		}
		PolicySpec after = this.catalog.policy(name);
		if (after == null) {
			return null;
		}
		logger.warn("Rate limit policy '" + name + "' "
				+ (change.isEmpty() ? "back to its configuration" : "changed at run time " + change)
				+ " by " + author + ": was " + old
				+ ", now " + summary(after));
		return describe(after, false);
	}

	private static String summary(PolicySpec spec) {
		RateLimitPolicy policy = spec.policy();
		return policy.algorithm() + " " + policy.limit() + " per " + policy.describeWindow()
				+ (policy.algorithm().isBucket() ? " burst " + policy.burst() : "") + " " + policy.mode()
				+ (spec.isEnabled() ? "" : " (disabled)");
	}

	private KeyState state(RateLimitPolicy policy, String key) {
		Decision probe = this.rateLimiter.peek(policy, key);
		return new KeyState(probe.limit(), probe.remaining(), probe.resetAfterSeconds());
	}

	/**
	 * Reset one key of one policy, under every plan: its next request is decided as a new client's. A key locked out
	 * of the policy's penalty group is unlocked, on every instance sharing the store.
	 * @param policy the policy's name
	 * @param keyPath the key, as the limiter sees it or as the policy's heaviest keys show it (the rest of the path)
	 * @return what was reset, or {@code null} (404) for an unknown policy
	 */
	@DeleteOperation
	public @Nullable Map<String, String> reset(@Selector String policy,
			@Selector(match = Selector.Match.ALL_REMAINING) String[] keyPath) {
		String named = keyOf(policy, keyPath);
		PolicySpec declared = this.catalog.policy(policy);
		if (declared == null) {
			return null;
		}
		// A write needs more than read access: a key is named by its value, or as the heaviest keys show it.
		List<String> shownKeys = new ArrayList<>(heaviestKeys(policy));
		if (this.lockouts != null) {
			this.lockouts.lockedOut().forEach((locked) -> shownKeys.add(locked.key()));
		}
		String key = Objects.requireNonNullElse(this.keys.keyOf(named, shownKeys), named);
		this.rateLimiter.reset(declared.policy(), key);
		// The key may be a client of any plan: what unblocks it must reset its plan's counters too.
		for (RateLimitPolicy variant : declared.plans().values()) {
			this.rateLimiter.reset(variant, key);
		}
		if (this.lockouts != null) {
			this.lockouts.unlock(declared, key);
		}
		return Map.of("policy", policy, "key", this.keys.show(key), "reset", "true");
	}

	/**
	 * Return the key that the rest of a path names. Spring Boot's WebFlux mapping gives the segments from the first
	 * selector on, the policy's included ({@code [orders, user-42]}), where its Spring MVC mapping and JMX give the
	 * key's alone ({@code [user-42]}): a first segment that is the policy's name is not part of the key. (On Spring MVC,
	 * a key that itself starts with its policy's name and a slash is read without that prefix.)
	 * @param policy the policy's name
	 * @param keyPath the segments the selector matching all remaining ones was given
	 * @return the key
	 */
	static String keyOf(String policy, String[] keyPath) {
		int first = (keyPath.length > 1 && keyPath[0].equals(policy)) ? 1 : 0;
		return String.join("/", Arrays.asList(keyPath).subList(first, keyPath.length));
	}

	private PolicyDescriptor describe(PolicySpec declared, boolean withHeaviest) {
		RateLimitPolicy policy = declared.policy();
		Map<String, PlanDescriptor> plans = new LinkedHashMap<>();
		declared.plans().forEach((plan, variant) -> plans.put(plan, new PlanDescriptor(variant.limit(),
				variant.describeWindow(), variant.algorithm().isBucket() ? variant.burst() : null,
				declared.planSources().getOrDefault(plan, Map.of()))));
		return new PolicyDescriptor(policy.name(), policy.algorithm().name(), policy.limit(),
				policy.describeWindow(), policy.algorithm().isBucket() ? policy.burst() : null,
				policy.failureMode().name(), policy.mode().name(), declared.value("description", String.class),
				(policy.lease() == 0) ? null
						: (policy.lease() == RateLimitPolicy.LEASE_AUTO) ? "auto" : String.valueOf(policy.lease()),
				this.catalog.declaredBy(policy.name()), declared.sources(), plans, declared.isEnabled(),
				withHeaviest ? heaviest(policy.name()) : null);
	}

	private HeavyHitters.@Nullable Heaviest heaviest(String policy) {
		HeavyHitters.Heaviest heaviest = (this.heavyHitters != null) ? this.heavyHitters.heaviest(policy, 10) : null;
		if (heaviest == null) {
			return null;
		}
		return new HeavyHitters.Heaviest(shown(heaviest.rejected()), shown(heaviest.admitted()),
				heaviest.periodSeconds());
	}

	private List<HeavyHitters.Count> shown(List<HeavyHitters.Count> counts) {
		return counts.stream()
			.map((count) -> new HeavyHitters.Count(this.keys.show(count.key()), count.count(), count.error()))
			.toList();
	}

	/** Every key a policy's sketch holds: what a read by a shown key may name. */
	private List<String> heaviestKeys(String policy) {
		HeavyHitters.Heaviest heaviest = (this.heavyHitters != null && !this.keys.showsRawKeys())
				? this.heavyHitters.heaviest(policy, Integer.MAX_VALUE) : null;
		if (heaviest == null) {
			return List.of();
		}
		return Stream.concat(heaviest.rejected().stream(), heaviest.admitted().stream())
			.map(HeavyHitters.Count::key)
			.toList();
	}

	/**
	 * The store and the policies.
	 * @param store the store's type
	 * @param policies the policies
	 * @param changes by policy, the changes the store keeps (as last read), each with who made it, where and when,
	 * and whether it applies here; in memory, those made on this instance (since 0.4.0)
	 * @param unlimited the handler methods no limit covers (neither a policy of their own nor, for every HTTP method
	 * and path they are mapped to, a filter), as {@code GET /api/health HealthController#health()} (since 0.4.0)
	 * @param lockedOut the keys locked out of penalty groups that this instance knows of, the longest first (since
	 * 0.5.0)
	 */
	public record RateLimitsDescriptor(String store, List<PolicyDescriptor> policies,
			Map<String, RuntimeChanges.StoredChange> changes, List<String> unlimited,
			List<LockedOutDescriptor> lockedOut) {
	}

	/**
	 * A key locked out of a penalty group: one this instance locked out, or whose request it rejected for it.
	 * @param group the penalty group
	 * @param policy a policy of the group, under which a reset of the key unlocks it
	 * @param key the key, as shown
	 * @param retryAfterSeconds seconds until the lock-out ends, as this instance last learned it
	 * @since 0.5.0
	 */
	public record LockedOutDescriptor(String group, String policy, String key, long retryAfterSeconds) {
	}

	/**
	 * One policy's effective configuration and where each value came from ({@code annotation}, or the property).
	 * @param name the name
	 * @param algorithm the algorithm
	 * @param limit the limit
	 * @param window the window; a concurrency limit's hold, how long a slot a request never gave back stays taken
	 * @param burst the burst of the bucket algorithms
	 * @param failureMode the failure mode
	 * @param mode whether it rejects ({@code ENFORCE}) or only reports ({@code SHADOW}) (since 0.2.0)
	 * @param description what the limit is for, in words, or {@code null} (since 0.2.0)
	 * @param lease the units each instance leases a block at a time ({@code auto} or a number), or {@code null} if
	 * it leases none (since 0.3.0)
	 * @param declaredBy the methods that declare it
	 * @param sources by attribute, where its value came from
	 * @param plans by plan, how the policy counts under it (from {@code ratelimit.plans.<plan>.<policy>})
	 * @param enabled whether the policy applies: {@code false} once disabled at run time (since 0.3.0)
	 * @param heaviest the keys with the most rejected and admitted requests of the last few minutes, in the read of
	 * one policy, each shown as the endpoint's {@link KeyDisplay} says (since 0.3.0)
	 */
	public record PolicyDescriptor(String name, String algorithm, long limit, String window, @Nullable Long burst,
			String failureMode, String mode, @Nullable String description, @Nullable String lease,
			List<String> declaredBy, Map<String, String> sources, Map<String, PlanDescriptor> plans, boolean enabled,
			HeavyHitters.@Nullable Heaviest heaviest) {
	}

	/**
	 * How a policy counts under one plan, and where each value came from.
	 * @param limit the limit
	 * @param window the window
	 * @param burst the burst of the bucket algorithms
	 * @param sources by attribute, the plan's property that set it, or {@code policy} for a value kept from the policy
	 * @since 0.2.0
	 */
	public record PlanDescriptor(long limit, String window, @Nullable Long burst, Map<String, String> sources) {
	}

	/**
	 * One key's state under a policy.
	 * @param policy the policy
	 * @param key the key, as shown
	 * @param limit the capacity
	 * @param remaining the units that could pass now
	 * @param resetAfterSeconds seconds until the full capacity is back
	 * @param circuitOpen whether the circuit in front of the store's part holding the key is open
	 * @param plans by plan that changes the policy, the key's state under that plan's variant (since 0.2.0)
	 */
	public record KeyDescriptor(String policy, String key, long limit, long remaining, long resetAfterSeconds,
			boolean circuitOpen, Map<String, KeyState> plans) {
	}

	/**
	 * One key's counters under one variant of a policy.
	 * @param limit the capacity
	 * @param remaining the units that could pass now
	 * @param resetAfterSeconds seconds until the full capacity is back
	 * @since 0.2.0
	 */
	public record KeyState(long limit, long remaining, long resetAfterSeconds) {
	}

}
