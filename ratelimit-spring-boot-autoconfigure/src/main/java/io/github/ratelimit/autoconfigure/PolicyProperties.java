package io.github.ratelimit.autoconfigure;

import java.beans.PropertyDescriptor;
import java.time.ZoneId;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.PolicyMode;
import io.github.ratelimit.engine.PolicyValues;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeanWrapper;
import org.springframework.beans.BeanWrapperImpl;

/**
 * Settings of one policy: over the annotations that declare it ({@code ratelimit.policies.<name>}), or of a
 * filter ({@code ratelimit.filters.<name>}). Each setting left unset keeps the annotation's value, or the
 * default.
 */
public class PolicyProperties {

	/**
	 * Maximum number of units per window (for the bucket algorithms, the refill or drain rate per window). When
	 * not set, the annotation's limit; a filter requires it.
	 */
	private @Nullable Long limit;

	/**
	 * Window length: a duration (500ms, 30s, 1m, 1h, 1d or PT1M; seconds if no unit is given), or a calendar window
	 * of fixed and sliding-counter: 1M (a month, upper-case M), 1w (a week from Monday), and with a zone 1d (a day
	 * from midnight). When not set, the annotation's window; a filter requires it.
	 */
	private @Nullable String window;

	/**
	 * Time zone whose calendar a window of 1d, 1w or 1M follows, such as Europe/Berlin: windows start at its
	 * midnights, of their real length (days of 23 or 25 hours where daylight saving time changes). When not set,
	 * the annotation's zone, or else UTC.
	 */
	private @Nullable ZoneId zone;

	/**
	 * Algorithm that enforces the limit. When not set, the annotation's algorithm, or else fixed.
	 */
	private @Nullable Algorithm algorithm;

	/**
	 * Bucket capacity of the token and leaky bucket algorithms. When not set, the annotation's burst, or else the
	 * limit.
	 */
	private @Nullable Long burst;

	/**
	 * Whether the policy applies. A disabled policy neither counts nor limits.
	 */
	private boolean enabled = true;

	/**
	 * What happens to a request of this policy when the store cannot decide. When not set, the global failure
	 * mode applies.
	 */
	private @Nullable FailureMode failureMode;

	/**
	 * SpEL expression of the counter key, over the same variables as the annotation's key (a filter's: #request
	 * and #clientIp). A policy defined here in full with a key is a shared policy, drawn by every annotation and
	 * filter that names it. When not set, the annotation's key, or else the client IP address.
	 */
	private @Nullable String key;

	/**
	 * Units each request takes: a whole number, or a SpEL expression over the key's variables. When not set, the
	 * annotation's cost, or else 1.
	 */
	private @Nullable String cost;

	/**
	 * Which outcomes count: HTTP status codes (401) or classes (4xx, 5xx). The unit is taken before the request
	 * is served and given back when the outcome does not match. When not set, the annotation's count-on applies
	 * (by default every admitted request counts).
	 */
	private @Nullable List<String> countOn;

	/**
	 * SpEL condition under which the policy neither counts nor limits the request. When not set, the
	 * annotation's applies.
	 */
	private @Nullable String skip;

	/**
	 * Whether the policy rejects (enforce) or only reports what it would have rejected (shadow). When not set,
	 * the annotation's mode, or else enforce.
	 */
	private @Nullable PolicyMode mode;

	/**
	 * SpEL expression of what the request really cost, over the key's variables and #result (what the method
	 * returned): the cost is reserved before the method runs and settled to this when it returns, giving back the
	 * difference or taking the extra (the key may go into debt). When not set, the annotation's settle; without
	 * one, the cost is what was reserved.
	 */
	private @Nullable String settle;

	public @Nullable String getSettle() {
		return this.settle;
	}

	public void setSettle(@Nullable String settle) {
		this.settle = settle;
	}

	/**
	 * SpEL expression of the request's tenant, over the key's variables: with a TenantLimitsSource bean, the
	 * tenant's own limits apply, each tenant with limits of its own counted apart. When not set, the
	 * annotation's tenant; without one, the policy's own limits.
	 */
	private @Nullable String tenant;

	public @Nullable String getTenant() {
		return this.tenant;
	}

	public void setTenant(@Nullable String tenant) {
		this.tenant = tenant;
	}

	/**
	 * What the limit is for, in words, shown by the actuator endpoint; it changes nothing in how the policy
	 * counts. When not set, the annotation's description applies.
	 */
	private @Nullable String description;

	/**
	 * Lease the key's units a block at a time in front of a shared store, admitting from the block without a round
	 * trip: 'auto' (blocks sized from each instance's rate, up to a sixteenth of the limit or burst) or a number of
	 * units. The fleet never admits more than the limit, and may admit up to (instances - 1) x block less per
	 * window. Not for sliding-log. When not set, the annotation's lease applies.
	 */
	private @Nullable String lease;

	/**
	 * Lock a key out once it breaks this policy, for this long ('1h', 'PT1H'; a unit is required; at most 31 days): a
	 * rejection, or with count-on the counted request that uses the last unit, locks the key out of every policy of
	 * its penalty group, on every instance sharing the store; its requests get 429 with the problem type
	 * abnormal-usage-detected until then. Not with a lease, nor a key every client shares. When not set, the
	 * annotation's penalty applies.
	 */
	private @Nullable String penalty;

	/**
	 * Penalty group this policy's keys are locked out of, and checked against: every policy naming a group rejects
	 * its locked-out keys. When not set, the annotation's, else the policy's own name if it has a penalty.
	 */
	private @Nullable String penaltyGroup;

	/**
	 * Let a request over the limit wait for its turn when it comes within this long ('500ms'; at most a minute),
	 * rather than reject it: a bucket reserves the turn in the store, a window's request waits for room and is
	 * decided once more. When not set, the annotation's max-wait applies.
	 */
	private @Nullable String maxWait;

	/**
	 * How many requests of a key may wait at once on an instance, from 1 to 10,000 (default 20); the next is
	 * rejected at once. When not set, the annotation's max-queued applies.
	 */
	private @Nullable Long maxQueued;

	/**
	 * For the CONCURRENCY algorithm, which takes it instead of a window: how long a slot stays taken when its request
	 * never gives it back (an instance that died mid-request), such as 30s or 5m, at most a day (default a minute).
	 * Longer than the longest request: one that runs longer is logged at WARN. When not set, the annotation's hold
	 * applies.
	 */
	private @Nullable String hold;

	/**
	 * Return these settings as one source of the policy's values, by the names the annotation and the
	 * properties share: every setting, read generically, so that a new one needs no code here.
	 * @param source the property prefix, such as {@code ratelimit.policies.orders}
	 * @return the values
	 */
	PolicyValues toValues(String source) {
		return values(source, this);
	}

	public @Nullable String getKey() {
		return this.key;
	}

	public void setKey(@Nullable String key) {
		this.key = key;
	}

	public @Nullable String getCost() {
		return this.cost;
	}

	public void setCost(@Nullable String cost) {
		this.cost = cost;
	}

	public @Nullable List<String> getCountOn() {
		return this.countOn;
	}

	public void setCountOn(@Nullable List<String> countOn) {
		this.countOn = countOn;
	}

	public @Nullable String getSkip() {
		return this.skip;
	}

	public void setSkip(@Nullable String skip) {
		this.skip = skip;
	}

	public @Nullable PolicyMode getMode() {
		return this.mode;
	}

	public void setMode(@Nullable PolicyMode mode) {
		this.mode = mode;
	}

	public @Nullable String getDescription() {
		return this.description;
	}

	public void setDescription(@Nullable String description) {
		this.description = description;
	}

	public @Nullable String getPenalty() {
		return this.penalty;
	}

	public void setPenalty(@Nullable String penalty) {
		this.penalty = penalty;
	}

	public @Nullable String getMaxWait() {
		return this.maxWait;
	}

	public void setMaxWait(@Nullable String maxWait) {
		this.maxWait = maxWait;
	}

	public @Nullable Long getMaxQueued() {
		return this.maxQueued;
	}

	public void setMaxQueued(@Nullable Long maxQueued) {
		this.maxQueued = maxQueued;
	}

	public @Nullable String getHold() {
		return this.hold;
	}

	public void setHold(@Nullable String hold) {
		this.hold = hold;
	}

	public @Nullable String getPenaltyGroup() {
		return this.penaltyGroup;
	}

	public void setPenaltyGroup(@Nullable String penaltyGroup) {
		this.penaltyGroup = penaltyGroup;
	}

	public @Nullable String getLease() {
		return this.lease;
	}

	public void setLease(@Nullable String lease) {
		this.lease = lease;
	}

	public @Nullable Long getLimit() {
		return this.limit;
	}

	public void setLimit(@Nullable Long limit) {
		this.limit = limit;
	}

	public @Nullable String getWindow() {
		return this.window;
	}

	public void setWindow(@Nullable String window) {
		this.window = window;
	}

	public @Nullable ZoneId getZone() {
		return this.zone;
	}

	public void setZone(@Nullable ZoneId zone) {
		this.zone = zone;
	}

	public @Nullable Algorithm getAlgorithm() {
		return this.algorithm;
	}

	public void setAlgorithm(@Nullable Algorithm algorithm) {
		this.algorithm = algorithm;
	}

	public @Nullable Long getBurst() {
		return this.burst;
	}

	public void setBurst(@Nullable Long burst) {
		this.burst = burst;
	}

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public @Nullable FailureMode getFailureMode() {
		return this.failureMode;
	}

	public void setFailureMode(@Nullable FailureMode failureMode) {
		this.failureMode = failureMode;
	}

	/** Every setting of a policy or plan, read generically, as one source of the policy's values. */
	static PolicyValues values(String source, Object settings) {
		BeanWrapper wrapper = new BeanWrapperImpl(settings);
		Map<String, Object> values = new LinkedHashMap<>();
		for (PropertyDescriptor property : wrapper.getPropertyDescriptors()) {
			if (property.getReadMethod() != null && !property.getName().equals("class")) {
				Object value = wrapper.getPropertyValue(property.getName());
				if (value != null) {
					values.put(property.getName(), value);
				}
			}
		}
		return new PolicyValues(source, values);
	}

}
