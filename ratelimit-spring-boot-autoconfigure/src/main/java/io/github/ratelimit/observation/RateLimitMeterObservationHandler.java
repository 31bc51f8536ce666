package io.github.ratelimit.observation;

import java.util.concurrent.ConcurrentHashMap;

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
		Throwable error = context.getError();
		KeyValues tags = context.getLowCardinalityKeyValues()
			.and("error", (error != null) ? error.getClass().getSimpleName() : "none");
		Timer timer = this.timers.get(tags);
		if (timer == null) {
			String name = context.getName();
			timer = register((name != null) ? name : DefaultRateLimitObservationConvention.NAME, tags);
			if (this.timers.size() < MAX_TIMERS) {
				this.timers.putIfAbsent(tags, timer);
			}
		}
		timer.record(elapsed, java.util.concurrent.TimeUnit.NANOSECONDS);
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
