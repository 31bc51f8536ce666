package io.github.ratelimit.redis;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.store.PolicyNames;
import org.jspecify.annotations.Nullable;

/**
 * What the store keeps per policy, its own parameter sets and other instances' ({@link PolicyScript}: the script, the
 * key layout, the lanes, the view of the other sets), set up on first use and dropped once idle, so that tenants'
 * variants that come and go do not pile up.
 */
final class PolicyScripts {

	/** Past how many policies the store looks for idle ones to drop when it meets a new one. */
	static final int SWEEP_ABOVE_POLICIES = 1_024;

	/** How long a policy stays unused before the store drops what it keeps for it: ten minutes. */
	static final long IDLE_POLICY_MILLIS = 600_000;

	private final ConcurrentHashMap<RateLimitPolicy, PolicyScript> policies = new ConcurrentHashMap<>();

	/** When idle policies were last looked for, in local milliseconds. */
	private final AtomicLong lastSweep = new AtomicLong(Long.MIN_VALUE / 2);

	private final PolicyNames names = new PolicyNames();

	private final RedisKeys keys;

	private final byte[] leastTtl;

	private final @Nullable Coalescer coalescer;

	private final PolicyVersions versions;

	private final @Nullable TimeSource clock;

	PolicyScripts(RedisKeys keys, byte[] leastTtl, @Nullable Coalescer coalescer, PolicyVersions versions,
			@Nullable TimeSource clock) {
		this.keys = keys;
		this.leastTtl = leastTtl;
		this.coalescer = coalescer;
		this.versions = versions;
		this.clock = clock;
	}

	/** The policy's script, this instance's parameter set or another instance's. */
	PolicyScript of(RateLimitPolicy policy) {
		PolicyScript script = this.policies.get(policy);
		if (script != null) {
			return script;
		}
		if (this.policies.size() >= SWEEP_ABOVE_POLICIES) {
			dropIdle();
		}
		return this.policies.computeIfAbsent(policy, (p) -> {
			PolicyScript created = new PolicyScript(p, this.keys, this.leastTtl, this.coalescer, this.versions);
			created.lastUsed = localMillis(System.nanoTime());
			return created;
		});
	}

	/**
	 * The script of a policy this instance decides with (not another instance's parameter set of it): the first
	 * time, checked to be the only configuration of its name and variant here, so that this instance's own sets are
	 * never taken for a rolling deploy.
	 */
	PolicyScript own(RateLimitPolicy policy) {
		PolicyScript script = of(policy);
		if (!script.own) {
			this.names.check(policy);
			script.own = true;
		}
		return script;
	}

	/** The script of a policy this instance decides with, marked used at the given time ({@link System#nanoTime()}). */
	PolicyScript used(RateLimitPolicy policy, long nanoTime) {
		PolicyScript script = own(policy);
		script.lastUsed = localMillis(nanoTime);
		return script;
	}

	/**
	 * Drop what is kept for policies no decision used for {@value #IDLE_POLICY_MILLIS} ms (a tenant's variant gone
	 * quiet), at most once a second: a policy that comes back is set up again, and says which parameters it decides
	 * with before its first decision, as a new one does.
	 */
	private void dropIdle() {
		long now = localMillis(System.nanoTime());
		long last = this.lastSweep.get();
		if (now - last < 1_000 || !this.lastSweep.compareAndSet(last, now)) {
			return;
		}
		this.policies.forEach((policy, script) -> {
			if (now - script.lastUsed >= IDLE_POLICY_MILLIS && this.policies.remove(policy, script) && script.own) {
				this.names.forget(policy);
			}
		});
	}

	/** How many policies scripts are kept for, this instance's own and other instances' parameter sets. */
	int size() {
		return this.policies.size();
	}

	/** Milliseconds for the policies' idle times: monotonic, unless a clock drives the store. */
	private long localMillis(long nanoTime) {
		return (this.clock != null) ? this.clock.currentTimeMillis() : nanoTime / 1_000_000;
	}

}
