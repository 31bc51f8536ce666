package io.github.ratelimit.benchmarks;

import java.lang.reflect.Method;
import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.TimeSource;
import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.engine.PolicyCatalog;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.engine.RateLimitOutcome;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.Reservation;
import io.github.ratelimit.web.ForwardedHeader;
import io.github.ratelimit.web.RateLimitHeaderStyle;
import io.github.ratelimit.web.RateLimitRequest;
import io.github.ratelimit.web.StandardRateLimitHeadersWriter;
import io.github.ratelimit.web.TrustedProxiesClientIpResolver;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What each part of a {@code @RateLimited} method's decision costs on the request's thread, in memory, as the web
 * adapters ask it ({@link RateLimitEngine#decideMethod}): the parts are told apart by deciding the same request with
 * one part added at a time, in the same run.
 * <ul>
 * <li>{@code store}: the limiter and the in-memory store alone ({@code RateLimiter.tryAcquireAll}, one acquisition);
 * <li>{@code engine}: the method's policies looked up, a literal key, the decision, no headers, no observation;
 * <li>{@code engine-key-argument}, {@code engine-key-client-ip}: the same keyed by a SpEL expression over an argument,
 * and by the client's address behind a trusted proxy ({@code X-Forwarded-For});
 * <li>{@code engine-headers}: the same with the default headers ({@code draft-6}: three fields);
 * <li>{@code engine-observed}: the same with the decision observed into a timer (Micrometer's meter handler);
 * <li>{@code engine-all}: client-IP key, headers and observation: what the starter does by default;
 * <li>{@code engine-leased}: as {@code engine}, in front of a store shared with other instances (the in-memory store
 * seen as one, with its deny cache and circuit breaker) and the policy leasing blocks ({@code lease = "auto"}): the
 * requests a block answers without asking the store.
 * </ul>
 * {@snippet lang = "shell" :
 * java -jar benchmarks/target/benchmarks.jar RequestPathBenchmark -f 3 -wi 5 -i 5
 * }
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class RequestPathBenchmark {

	@Param({ "store", "engine", "engine-key-argument", "engine-key-client-ip", "engine-headers", "engine-observed",
			"engine-all", "engine-leased" })
	public String path;

	private RateLimiter limiter;

	private List<Acquisition> acquisition;

	private RateLimitEngine engine;

	private Method method;

	private Object[] arguments;

	private BenchRequest request;

	@Setup
	public void setUp() throws NoSuchMethodException {
		InMemoryRateLimitStore memory = InMemoryRateLimitStore.builder().build();
		this.limiter = RateLimiter.of(this.path.equals("engine-leased") ? new SharedView(memory) : memory);
		this.acquisition = List.of(new Acquisition(RateLimitPolicy.builder("store").limit(Integer.MAX_VALUE)
			.window(Duration.ofMinutes(1)).build(), "k", 1));
		String methodName = switch (this.path) {
			case "engine-key-argument" -> "byArgument";
			case "engine-key-client-ip", "engine-all" -> "byClientIp";
			case "engine-leased" -> "leased";
			default -> "literal";
		};
		this.method = Endpoints.class.getMethod(methodName, String.class);
		this.arguments = new Object[] { "user-42" };
		this.request = new BenchRequest();
		PolicyCatalog catalog = PolicyCatalog.builder().build();
		catalog.register(Endpoints.class);
		boolean headers = this.path.equals("engine-headers") || this.path.equals("engine-all");
		boolean observed = this.path.equals("engine-observed") || this.path.equals("engine-all");
		RateLimitEngine.Builder builder = RateLimitEngine.builder(catalog, this.limiter,
				new StandardRateLimitHeadersWriter(Set.of(headers ? RateLimitHeaderStyle.DRAFT_6 : RateLimitHeaderStyle.NONE),
						RateLimitHeaderStyle.ResetFormat.DELTA_SECONDS, TimeSource.system()),
				new TrustedProxiesClientIpResolver(List.of("127.0.0.1/32"), ForwardedHeader.X_FORWARDED_FOR, 32, 64,
						Duration.ofMinutes(1)));
		if (observed) {
			ObservationRegistry registry = ObservationRegistry.create();
			registry.observationConfig().observationHandler(new DefaultMeterObservationHandler(new SimpleMeterRegistry()));
			builder.observationRegistry(registry, null);
		}
		this.engine = builder.build();
	}

	@Benchmark
	public Object decide() {
		if (this.path.equals("store")) {
			return this.limiter.tryAcquireAll(this.acquisition);
		}
		this.request.attributes.clear(); // a new request: the filter layer's hand-off is not there
		RateLimitOutcome outcome = this.engine.decideMethod(this.method, Endpoints.class, this.arguments, this.request);
		return (outcome != null) ? outcome.headers() : this;
	}

	/** The limited methods: one policy each, a limit out of reach. */
	public static class Endpoints {

		@RateLimited(name = "literal", limit = Integer.MAX_VALUE, window = "1m", key = "'k'")
		public String literal(String user) {
			return user;
		}

		@RateLimited(name = "leased", limit = Integer.MAX_VALUE, window = "1m", key = "'k'", lease = "auto")
		public String leased(String user) {
			return user;
		}

		@RateLimited(name = "argument", limit = Integer.MAX_VALUE, window = "1m", key = "#user")
		public String byArgument(String user) {
			return user;
		}

		@RateLimited(name = "client-ip", limit = Integer.MAX_VALUE, window = "1m")
		public String byClientIp(String user) {
			return user;
		}

	}

	/** The in-memory store as the limiter would see a shared one: what leases and the deny cache stand in front of. */
	static final class SharedView implements RateLimitStore {

		private final RateLimitStore store;

		SharedView(RateLimitStore store) {
			this.store = store;
		}

		@Override
		public Decision tryAcquire(RateLimitPolicy policy, String key, long cost) {
			return this.store.tryAcquire(policy, key, cost);
		}

		@Override
		public Reservation tryAcquireAll(List<Acquisition> acquisitions) {
			return this.store.tryAcquireAll(acquisitions);
		}

		@Override
		public void refund(Acquisition acquisition, long countedAtMillis) {
			this.store.refund(acquisition, countedAtMillis);
		}

		@Override
		public long currentTimeMillis() {
			return this.store.currentTimeMillis();
		}

		@Override
		public void reset(RateLimitPolicy policy, String key) {
			this.store.reset(policy, key);
		}

	}

	/** A request from 203.0.113.7 through a proxy on 127.0.0.1. */
	static final class BenchRequest implements RateLimitRequest {

		final Map<String, Object> attributes = new HashMap<>();

		private final List<String> forwarded = new ArrayList<>(List.of("203.0.113.7"));

		@Override
		public String getMethod() {
			return "GET";
		}

		@Override
		public @Nullable String getHeader(String name) {
			return name.equalsIgnoreCase("X-Forwarded-For") ? "203.0.113.7" : null;
		}

		@Override
		public List<String> getHeaders(String name) {
			return name.equalsIgnoreCase("X-Forwarded-For") ? this.forwarded : List.of();
		}

		@Override
		public @Nullable String getRemoteAddr() {
			return "127.0.0.1";
		}

		@Override
		public @Nullable Principal getUserPrincipal() {
			return null;
		}

		@Override
		public Object getNativeRequest() {
			return this;
		}

		@Override
		public @Nullable Object getAttribute(String name) {
			return this.attributes.get(name);
		}

		@Override
		public void setAttribute(String name, Object value) {
			this.attributes.put(name, value);
		}

	}

}
