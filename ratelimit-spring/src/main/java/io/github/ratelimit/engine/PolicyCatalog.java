package io.github.ratelimit.engine;

import java.lang.reflect.Method;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

import io.github.ratelimit.FailureMode;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.annotation.RateLimited;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.expression.BeanResolver;
import org.springframework.http.server.PathContainer;

/**
 * Every policy of the application, built and checked at start-up: the filters' ({@code ratelimit.filters.*}) with
 * the shared policies they draw, and those of every {@code @RateLimited} method, with {@code ratelimit.policies.*}
 * over the annotations and {@code ratelimit.plans.*} over both. A mistake fails the start with a message naming
 * where the policy is declared, the attribute and the value; so does a configured policy or plan that names no
 * policy. At run time, finding a method's policies is a map lookup, and no request builds a policy.
 *
 * @since 0.2.0
 */
public final class PolicyCatalog implements SmartInitializingSingleton, BeanFactoryAware {

	static final String POLICIES = "ratelimit.policies";

	/** {@code ratelimit.policies.<name>}, by name. */
	private final Map<String, PolicyValues> configured;

	private final Map<String, Map<String, PolicyValues>> plans;

	private final @Nullable String defaultPlan;

	/** Shared policies that disabled filters draw: configured for a reason, though nothing draws them now. */
	private final Set<String> drawnByDisabledFilters;

	private final PolicyParser parser;

	private final Consumer<RateLimitPolicy> storeCheck;

	private final List<FilterRule> filters;

	private final @Nullable RateLimitedClasses rateLimitedClasses;

	private final PolicyDeclarations declarations = new PolicyDeclarations();

	private final MethodPolicies methods;

	private BeanResolver beanResolver = (context, beanName) -> {
		throw new IllegalStateException("No bean factory to resolve @" + beanName);
	};

	private @Nullable ConfigurableListableBeanFactory beanFactory;

	private volatile boolean initialized;

	private PolicyCatalog(Builder builder) {
		this.configured = Collections.unmodifiableMap(new LinkedHashMap<>(builder.policies));
		Map<String, Map<String, PolicyValues>> plans = new LinkedHashMap<>();
		builder.plans.forEach((plan, policies) -> plans.put(plan, Map.copyOf(policies)));
		this.plans = Collections.unmodifiableMap(plans);
		if (builder.defaultPlan != null && !plans.containsKey(builder.defaultPlan)) {
			throw new InvalidRateLimitPolicyException(builder.defaultPlan, "ratelimit.default-plan '"
					+ builder.defaultPlan + "' is not a plan under ratelimit.plans. Known plans: "
					+ (plans.isEmpty() ? "none" : String.join(", ", new TreeSet<>(plans.keySet()))) + ".");
		}
		this.defaultPlan = builder.defaultPlan;
		this.drawnByDisabledFilters = Set.copyOf(builder.drawnByDisabledFilters);
		this.rateLimitedClasses = builder.rateLimitedClasses;
		this.storeCheck = builder.storeCheck;
		this.parser = new PolicyParser(builder.defaultFailureMode, builder.storeCheck, builder.sharedKeyCheck,
				this.plans);
		this.methods = new MethodPolicies(this.parser, this.configured, this.declarations);
		this.filters = FilterRules.build(builder.filters, this.configured, this::declareConfigured);
	}

	/**
	 * Start building a catalogue.
	 * @return a builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	@Override
	public void setBeanFactory(BeanFactory beanFactory) {
		this.beanResolver = new BeanFactoryResolver(beanFactory);
		if (beanFactory instanceof ConfigurableListableBeanFactory listable) {
			this.beanFactory = listable;
		}
	}

	/**
	 * Find and check every rate limited method of the application's beans, then check that every configured policy
	 * and every plan names a declared policy.
	 * @throws InvalidRateLimitPolicyException if anything is invalid
	 */
	@Override
	public void afterSingletonsInstantiated() {
		if (this.beanFactory != null) {
			for (String name : this.beanFactory.getBeanDefinitionNames()) {
				Class<?> type = this.beanFactory.getType(name, false);
				if (type != null) {
					register(type);
				}
			}
		}
		if (this.rateLimitedClasses != null) {
			this.rateLimitedClasses.eligibleClasses().forEach(this::register);
			this.rateLimitedClasses.onEligibleClass(this::register);
		}
		checkConfiguredPoliciesExist();
		checkPlannedPoliciesExist();
		this.initialized = true;
	}

	/**
	 * Declare a policy that a web stack's own configuration defines, such as a gateway route's: its values, under those
	 * of {@code ratelimit.policies.<name>} (which override them, as they override an annotation's). Declaring the
	 * same name again with the same settings returns the same policy; with other settings it fails, as two methods
	 * declaring one name differently do. Declared before start-up checking ends, a name configured under
	 * {@code ratelimit.policies} counts as known.
	 * @param name the policy's name
	 * @param where the declaration, for messages, such as {@code route 'orders'}
	 * @param values the values the declaration gives
	 * @return the policy, or {@code null} if it is disabled
	 * @throws InvalidRateLimitPolicyException if the values are invalid or conflict with another declaration
	 */
	public @Nullable PolicySpec declare(String name, String where, PolicyValues values) {
		String property = POLICIES + "." + PolicyParser.bracketed(name);
		PolicySpec spec = this.parser.parse(name, where, property,
				List.of(this.configured.getOrDefault(name, PolicyValues.NONE), values), new String[0],
				new Class<?>[0]);
		this.declarations.declare(name, where, spec, true);
		return spec;
	}

	/**
	 * Return whether start-up checking has run.
	 * @return whether the catalogue is initialized
	 */
	public boolean isInitialized() {
		return this.initialized;
	}

	/**
	 * Find and check the rate limited methods of a class (once per class).
	 * @param type the class
	 * @throws InvalidRateLimitPolicyException if anything is invalid
	 */
	public void register(Class<?> type) {
		this.methods.register(type);
	}

	/**
	 * Return the policies of a method invoked on an instance of the given class, or {@code null} if it has none.
	 */
	@Nullable MethodLimits lookup(Method method, Class<?> targetClass) {
		return this.methods.lookup(method, targetClass);
	}

	/**
	 * Return whether any filter is configured.
	 * @return whether the filter layer has filters
	 */
	public boolean hasFilters() {
		return !this.filters.isEmpty();
	}

	/**
	 * Return whether a filter applies to a request, so that a web stack passes a request no filter matches on
	 * without building anything for the filter layer.
	 * @param method the request's HTTP method
	 * @param paths the request's path within the application, and any other spelling of it
	 * @return whether a filter applies
	 * @since 0.3.0
	 */
	public boolean hasFilterFor(String method, List<PathContainer> paths) {
		return FilterRule.anyApplies(this.filters, method, paths);
	}

	/**
	 * Return whether a policy declared so far is settled after the response: it counts by outcome ({@code countOn}),
	 * settles its cost ({@code settle}), or is a concurrency limit, whose slot is given back at the request's end.
	 * Until one is, a web stack has nothing to settle at a request's end.
	 * @return whether a request may hold anything to settle
	 * @since 0.3.0
	 */
	public boolean settlesAfterResponse() {
		return this.declarations.settledAfterResponse();
	}

	/**
	 * Return the names of the filters, in the order they are decided.
	 * @return the names
	 */
	public List<String> filterNames() {
		return this.filters.stream().map(FilterRule::name).toList();
	}

	/**
	 * Return the path patterns of each filter, by name, in the order the filters are decided: for Spring Cloud
	 * Gateway, which refuses a path that matches one of them only when letter case is ignored.
	 * @return the patterns of each filter, as configured
	 * @since 0.3.0
	 */
	public Map<String, List<String>> filterPaths() {
		return FilterRules.patternsByName(this.filters);
	}

	List<FilterRule> filters() {
		return this.filters;
	}

	/**
	 * Return every declared policy that is enabled, in the order they were declared: the first declaration of each
	 * name.
	 * @return the policies
	 */
	public List<PolicySpec> policies() {
		return this.declarations.policies();
	}

	/**
	 * Return one declared, enabled policy.
	 * @param name the policy's name
	 * @return the policy, or {@code null} if there is none of that name
	 */
	public @Nullable PolicySpec policy(String name) {
		return this.declarations.policy(name);
	}

	/**
	 * Change how a policy counts from now on, on every declaration of it: the values given ({@code limit},
	 * {@code window}, {@code burst}, {@code algorithm}, {@code mode}, {@code enabled}) over those it was declared
	 * with, each checked as at start-up. Replaces an earlier change. A changed limit or burst keeps the policy's
	 * counts; a changed window or algorithm counts from fresh state.
	 * @param name the policy's name
	 * @param change the values, the first source that sets an attribute winning; none to go back to the declaration
	 * @return whether the policy exists
	 * @throws InvalidRateLimitPolicyException if a value is invalid, naming it; nothing is changed then
	 */
	public boolean change(String name, List<PolicyValues> change) {
		return this.declarations.change(name, change);
	}

	/**
	 * Check a change as {@link #change} would, without applying it.
	 * @param name the policy's name
	 * @param change the values
	 * @return whether the policy exists
	 * @throws InvalidRateLimitPolicyException if a value is invalid, naming it
	 */
	public boolean checkChange(String name, List<PolicyValues> change) {
		return this.declarations.checkChange(name, change);
	}

	/**
	 * Return the changes made at run time.
	 * @return by policy name, the values changed
	 */
	public Map<String, List<PolicyValues>> changes() {
		return this.declarations.changes();
	}

	/**
	 * Return every policy's spec, the disabled ones included, by name: one per name, as {@link #policy} does.
	 * @return the names of every declared policy that can be changed
	 */
	public List<String> names() {
		return this.declarations.names();
	}

	/**
	 * Return the methods (or properties) that declare a policy.
	 * @param name the policy's name
	 * @return where it is declared, in order
	 */
	public List<String> declaredBy(String name) {
		return this.declarations.declaredBy(name);
	}

	/**
	 * Return the plan a request whose resolver gave this plan is decided under: the plan if it is configured, else
	 * the default plan.
	 */
	@Nullable String effectivePlan(@Nullable String plan) {
		return (plan != null && this.plans.containsKey(plan)) ? plan : this.defaultPlan;
	}

	/**
	 * Check that the store can enforce a policy built at run time (a tenant's limits).
	 * @throws IllegalArgumentException if it cannot
	 */
	void checkSupported(RateLimitPolicy policy) {
		this.storeCheck.accept(policy);
	}

	BeanResolver beanResolver() {
		return this.beanResolver;
	}

	/** Parse and declare a policy configured in full at {@code where}: a filter's, or a shared one. */
	private @Nullable PolicySpec declareConfigured(String name, String where, List<PolicyValues> values) {
		PolicySpec spec = this.parser.parse(name, where, where, values, new String[0], new Class<?>[0]);
		this.declarations.declare(name, where, spec, true);
		return spec;
	}

	private void checkConfiguredPoliciesExist() {
		Set<String> known = this.declarations.knownNames();
		this.configured.forEach((name, values) -> {
			if (this.drawnByDisabledFilters.contains(name) || known.contains(name)) {
				return;
			}
			boolean shared = values.get("limit") != null && values.get("window") != null;
			throw new InvalidRateLimitPolicyException(name, POLICIES + "." + PolicyParser.bracketed(name)
					+ " does not match any @RateLimited policy. Known policies: "
					+ (known.isEmpty() ? "none" : String.join(", ", known)) + "."
					+ (shared ? " A shared policy is drawn by @RateLimited(name = \"" + name
							+ "\") or a filter's 'policies'; this one is drawn by none." : ""));
		});
	}

	private void checkPlannedPoliciesExist() {
		Set<String> known = this.declarations.knownNames();
		known.addAll(this.configured.keySet());
		this.plans.forEach((plan, policies) -> {
			for (String name : policies.keySet()) {
				if (!known.contains(name)) {
					throw new InvalidRateLimitPolicyException(name, "ratelimit.plans." + plan + "."
							+ PolicyParser.bracketed(name) + " does not match any policy. Known policies: "
							+ (known.isEmpty() ? "none" : String.join(", ", known)) + ".");
				}
			}
		});
	}

	/**
	 * Where the catalogue learns of classes whose beans are proxied for {@code @RateLimited} after start-up (lazy
	 * beans): the post-processor that proxies them.
	 */
	public interface RateLimitedClasses {

		/**
		 * Return the classes met so far.
		 * @return the classes
		 */
		Set<Class<?>> eligibleClasses();

		/**
		 * Have classes met from now on passed to the listener.
		 * @param listener the listener
		 */
		void onEligibleClass(Consumer<Class<?>> listener);

	}

	/**
	 * Builds a {@link PolicyCatalog} from configuration.
	 */
	public static final class Builder {

		private Map<String, PolicyValues> policies = Map.of();

		private List<FilterDefinition> filters = List.of();

		private Map<String, Map<String, PolicyValues>> plans = Map.of();

		private @Nullable String defaultPlan;

		private FailureMode defaultFailureMode = FailureMode.ALLOW;

		private Consumer<RateLimitPolicy> storeCheck = (policy) -> {
		};

		private Consumer<RateLimitPolicy> sharedKeyCheck = (policy) -> {
		};

		private Set<String> drawnByDisabledFilters = Set.of();

		private @Nullable RateLimitedClasses rateLimitedClasses;

		private Builder() {
		}

		/**
		 * Set the configured values of policies ({@code ratelimit.policies.<name>}), over their annotations; a policy
		 * configured in full with a key is a shared policy that annotations and filters draw by name.
		 * @param policies the values, by policy name
		 * @return this builder
		 */
		public Builder policies(Map<String, PolicyValues> policies) {
			this.policies = policies;
			return this;
		}

		/**
		 * Set the filters of the filter layer.
		 * @param filters the filters, enabled ones only
		 * @return this builder
		 */
		public Builder filters(List<FilterDefinition> filters) {
			this.filters = filters;
			return this;
		}

		/**
		 * Set the plans: by plan, by policy name, the values the plan changes ({@code limit}, {@code window},
		 * {@code burst}); and the plan of requests with none or an unknown one.
		 * @param plans the plans, in configuration order
		 * @param defaultPlan the default plan, or {@code null} for the policies as declared
		 * @return this builder
		 */
		public Builder plans(Map<String, Map<String, PolicyValues>> plans, @Nullable String defaultPlan) {
			this.plans = plans;
			this.defaultPlan = defaultPlan;
			return this;
		}

		/**
		 * Set the failure mode of policies that do not configure one.
		 * @param defaultFailureMode the failure mode
		 * @return this builder
		 */
		public Builder defaultFailureMode(FailureMode defaultFailureMode) {
			this.defaultFailureMode = defaultFailureMode;
			return this;
		}

		/**
		 * Check every policy against what the store can enforce.
		 * @param storeCheck throws {@link IllegalArgumentException} for a policy the store cannot enforce (see
		 * {@link io.github.ratelimit.store.RateLimitStore#checkSupported})
		 * @return this builder
		 */
		public Builder storeCheck(Consumer<RateLimitPolicy> storeCheck) {
			this.storeCheck = storeCheck;
			return this;
		}

		/**
		 * Check every policy whose key is the same for every request, and each of its plans, against what the store
		 * can count under one key.
		 * @param sharedKeyCheck throws {@link IllegalArgumentException} for a limit the store cannot count under one
		 * key (see {@link io.github.ratelimit.store.RateLimitStore#checkSharedKey})
		 * @return this builder
		 * @since 0.3.0
		 */
		public Builder sharedKeyCheck(Consumer<RateLimitPolicy> sharedKeyCheck) {
			this.sharedKeyCheck = sharedKeyCheck;
			return this;
		}

		/**
		 * Name the shared policies that disabled filters draw, so that switching a filter off does not fail start-up
		 * for the policies it drew.
		 * @param names the policy names
		 * @return this builder
		 */
		public Builder drawnByDisabledFilters(Set<String> names) {
			this.drawnByDisabledFilters = names;
			return this;
		}

		/**
		 * Learn of rate limited classes from the post-processor that proxies them.
		 * @param rateLimitedClasses the post-processor, or {@code null}
		 * @return this builder
		 */
		public Builder rateLimitedClasses(@Nullable RateLimitedClasses rateLimitedClasses) {
			this.rateLimitedClasses = rateLimitedClasses;
			return this;
		}

		/**
		 * Build the catalogue, checking the filters, the shared policies they draw and the plans.
		 * @return the catalogue
		 * @throws InvalidRateLimitPolicyException if anything is invalid
		 */
		public PolicyCatalog build() {
			return new PolicyCatalog(this);
		}

	}

}
