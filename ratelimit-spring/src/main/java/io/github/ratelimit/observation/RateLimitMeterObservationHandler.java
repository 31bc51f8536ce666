package io.github.ratelimit.observation;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.observation.MeterObservationHandler;
import io.micrometer.observation.Observation;

/**
 * Times the {@code ratelimit.decision} observation: a {@link Timer} named after the observation, tagged with its
 * low-cardinality key values and {@code error} (the exception's simple name, or {@code none}), as Micrometer's
 * {@code DefaultMeterObservationHandler} would, but with each timer looked up once per set of tags rather than on
 * every decision, and without a long-task timer: a decision takes microseconds, and in the sample app the default
 * handler's work was most of what {@code @RateLimited} cost a request. Other observations keep the default handler;
 * spans, where tracing is on, are not this handler's.
 *
 * @since 0.2.0
 */
public final class RateLimitMeterObservationHandler implements MeterObservationHandler<RateLimitObservationContext> {

	/** Tag sets are few (policies × outcomes × stores); a convention that makes more is looked up each time. */
	private static final int MAX_TIMERS = 10_000;

	private final MeterRegistry registry;

	/** By the context's key values, the timers of decisions that did not fail. */
	private final ConcurrentHashMap<KeyValues, Timer> timers = new ConcurrentHashMap<>();

	/**
	 * Create a handler that registers its timers in the given registry.
	 * @param registry the registry
	 */
	public RateLimitMeterObservationHandler(MeterRegistry registry) {
		this.registry = registry;
	}

	@Override
	public void onStart(RateLimitObservationContext context) {
		context.startedAt = this.registry.config().clock().monotonicTime();
	}

	@Override
	public void onStop(RateLimitObservationContext context) {
		long elapsed = this.registry.config().clock().monotonicTime() - context.startedAt;
		String name = context.getName();
		name = (name != null) ? name : DefaultRateLimitObservationConvention.NAME;
		KeyValues keyValues = context.getLowCardinalityKeyValues();
		Throwable error = context.getError();
		if (error != null) {
			// Rare: looked up in the registry each time, with the error's tag merged in.
			register(name, keyValues.and("error", error.getClass().getSimpleName())).record(elapsed,
					TimeUnit.NANOSECONDS);
			return;
		}
		// Found by the context's key values alone, with no tag merged in.
		Timer timer = this.timers.get(keyValues);
		if (timer == null) {
			timer = register(name, keyValues.and("error", "none"));
			if (this.timers.size() < MAX_TIMERS) {
				this.timers.putIfAbsent(keyValues, timer);
			}
		}
		timer.record(elapsed, TimeUnit.NANOSECONDS);
	}

	private Timer register(String name, KeyValues keyValues) {
		Tags tags = Tags.empty();
		for (KeyValue keyValue : keyValues) {
			tags = tags.and(Tag.of(keyValue.getKey(), keyValue.getValue()));
		}
		return Timer.builder(name).tags(tags).register(this.registry);
	}

	@Override
	public boolean supportsContext(Observation.Context context) {
		return context instanceof RateLimitObservationContext;
	}

}
