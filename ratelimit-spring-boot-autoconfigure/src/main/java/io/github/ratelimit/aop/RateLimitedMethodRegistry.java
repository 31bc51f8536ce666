package io.github.ratelimit.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.stream.Collectors;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.FailureMode;
import io.github.ratelimit.PolicyMode;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.annotation.RateLimited;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.MethodClassKey;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelCompilerMode;
import org.springframework.expression.spel.SpelParserConfiguration;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

/**
 * Everything about {@code @RateLimited} methods that can be decided before the first request, decided at start-up:
 * it finds the annotated methods, merges {@code ratelimit.policies.<name>.*} over the annotations, parses windows
 * and SpEL, and validates. A mistake fails the start with a message naming the method, the attribute and the value;
 * so does a configured policy name that no annotation declares. At run time, looking up a method's policies is one
 * map lookup.
 *
 * @since 0.1.0
 */
public final class RateLimitedMethodRegistry implements SmartInitializingSingleton, BeanFactoryAware {

	private static final Log logger = LogFactory.getLog(RateLimitedMethodRegistry.class);

	static final String PROPERTY_PREFIX = "ratelimit.policies";

	private final Map<String, PolicyOverride> overrides;

	/** By plan, by policy name, what the plan changes. */
	private Map<String, Map<String, PlanOverride>> plans = Map.of();

	private @Nullable String defaultPlan;

	/** Shared policies that disabled filters draw: configured for a reason, though nothing draws them now. */
	private Set<String> drawnByDisabledFilters = Set.of();

	private final FailureMode defaultFailureMode;

	private final Consumer<RateLimitPolicy> storeCheck;

	private final @Nullable RateLimitedAnnotationBeanPostProcessor postProcessor;

	private final SpelExpressionParser parser;

	private final DefaultParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();

	private final ConcurrentHashMap<Method, MethodRateLimits> byMethod = new ConcurrentHashMap<>();

	/**
	 * What {@link #byMethod} holds, keyed by the {@link Method} instances proxies invoke: the map finds them at its
	 * first test, the same instance, where the scanned ones are equal but other objects and were compared parameter
	 * type by parameter type.
	 */
	private final ConcurrentHashMap<Method, MethodRateLimits> byInvokedMethod = new ConcurrentHashMap<>();

	private final ConcurrentHashMap<MethodClassKey, MethodRateLimits> byMethodAndClass = new ConcurrentHashMap<>();

	/** Policies by name, with the method that first declared each; guarded by itself. */
	private final Map<String, Declaration> declared = new LinkedHashMap<>();

	/** By policy name, the variant of each plan that changes it; guarded by {@link #declared}. */
	private final Map<String, Map<String, RateLimitPolicy>> planned = new LinkedHashMap<>();

	/** The methods declaring each policy; guarded by {@link #declared}. */
	private final Map<String, List<String>> declaredBy = new LinkedHashMap<>();

	private final Set<Class<?>> scanned = ConcurrentHashMap.newKeySet();

	private BeanResolver beanResolver = (context, beanName) -> {
		throw new IllegalStateException("No bean factory to resolve @" + beanName);
	};

	private @Nullable ConfigurableListableBeanFactory beanFactory;

	private volatile boolean initialized;

	/**
	 * Create a registry.
	 * @param overrides configured values by policy name
	 * @param defaultFailureMode the failure mode of policies that do not configure one
	 * @param postProcessor the post-processor that proxies rate limited beans, whose bean classes are validated too
	 */
	public RateLimitedMethodRegistry(Map<String, PolicyOverride> overrides, FailureMode defaultFailureMode,
			@Nullable RateLimitedAnnotationBeanPostProcessor postProcessor) {
		this(overrides, defaultFailureMode, postProcessor, (policy) -> {
		});
	}

	/**
	 * Create a registry that also checks every policy against what the store can enforce.
	 * @param overrides configured values by policy name
	 * @param defaultFailureMode the failure mode of policies that do not configure one
	 * @param postProcessor the post-processor that proxies rate limited beans, whose bean classes are validated too
	 * @param storeCheck throws {@link IllegalArgumentException} for a policy the store cannot enforce (see
	 * {@link io.github.ratelimit.store.RateLimitStore#checkSupported})
	 */
	public RateLimitedMethodRegistry(Map<String, PolicyOverride> overrides, FailureMode defaultFailureMode,
			@Nullable RateLimitedAnnotationBeanPostProcessor postProcessor, Consumer<RateLimitPolicy> storeCheck) {
		this.storeCheck = storeCheck;
		this.overrides = Map.copyOf(overrides);
		this.defaultFailureMode = defaultFailureMode;
		this.postProcessor = postProcessor;
		this.parser = new SpelExpressionParser(
				new SpelParserConfiguration(SpelCompilerMode.MIXED, RateLimitedMethodRegistry.class.getClassLoader()));
	}

	@Override
	public void setBeanFactory(BeanFactory beanFactory) {
		this.beanResolver = new BeanFactoryResolver(beanFactory);
		if (beanFactory instanceof ConfigurableListableBeanFactory listable) {
			this.beanFactory = listable;
		}
	}

	/**
	 * Find and validate every rate limited method of the application's beans, then check that every configured
	 * policy name was declared.
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
		if (this.postProcessor != null) {
			this.postProcessor.eligibleClasses().forEach(this::register);
			this.postProcessor.onEligibleClass(this::register);
		}
		checkConfiguredPoliciesExist();
		checkPlannedPoliciesExist();
		this.initialized = true;
	}

	/**
	 * Check that every policy a plan changes is declared (by an annotation, a filter or in configuration).
	 * @throws InvalidRateLimitPolicyException naming the plan and the policy if not
	 */
	void checkPlannedPoliciesExist() {
		Set<String> known;
		synchronized (this.declared) {
			known = new TreeSet<>(this.declared.keySet());
		}
		known.addAll(this.overrides.keySet());
		this.plans.forEach((plan, policies) -> {
			for (String name : policies.keySet()) {
				if (!known.contains(name)) {
					throw new InvalidRateLimitPolicyException(name, "ratelimit.plans." + plan + "." + bracketed(name)
							+ " does not match any policy. Known policies: "
							+ (known.isEmpty() ? "none" : String.join(", ", known)) + ".");
				}
			}
		});
	}

	/**
	 * Find and validate the rate limited methods of a class.
	 * @param type the class
	 * @throws InvalidRateLimitPolicyException if anything is invalid
	 */
	void register(Class<?> type) {
		Class<?> userClass = ClassUtils.getUserClass(type);
		if (!RateLimitedMethods.isCandidate(userClass) || !this.scanned.add(userClass)) {
			return;
		}
		Map<Method, List<RateLimited>> methods = MethodIntrospector.selectMethods(userClass,
				(MethodIntrospector.MetadataLookup<List<RateLimited>>) (method) -> {
					List<RateLimited> annotations = RateLimitedMethods.annotationsOf(method, userClass);
					return annotations.isEmpty() ? null : annotations;
				});
		methods.forEach((method, annotations) -> this.byMethod.putIfAbsent(method, build(method, userClass, annotations)));
	}

	/**
	 * Return the policies of a method invoked on an instance of the given class, or {@code null} if it has none.
	 */
	@Nullable MethodRateLimits lookup(Method method, Class<?> targetClass) {
		MethodRateLimits limits = this.byInvokedMethod.get(method);
		if (limits != null && limits.targetClass == targetClass) {
			return limits.isEmpty() ? null : limits;
		}
		limits = this.byMethod.get(method);
		if (limits != null && limits.targetClass == targetClass) {
			if (this.byInvokedMethod.size() < this.byMethod.size()) {
				this.byInvokedMethod.put(method, limits);
			}
			return limits.isEmpty() ? null : limits;
		}
		MethodClassKey key = new MethodClassKey(method, targetClass);
		limits = this.byMethodAndClass.get(key);
		if (limits == null) {
			Class<?> userClass = ClassUtils.getUserClass(targetClass);
			List<RateLimited> annotations = RateLimitedMethods.annotationsOf(method, userClass);
			Method specific = ClassUtils.getMostSpecificMethod(method, userClass);
			MethodRateLimits built = build(specific, userClass, annotations);
			limits = this.byMethodAndClass.computeIfAbsent(key, (k) -> built);
		}
		return limits.isEmpty() ? null : limits;
	}

	/**
	 * Return the policies in force, by name.
	 * @return the enabled policies
	 */
	public Collection<RateLimitPolicy> policies() {
		synchronized (this.declared) {
			return this.declared.values()
				.stream()
				.map(Declaration::policy)
				.filter((policy) -> policy != null)
				.toList();
		}
	}

	/**
	 * Return whether start-up validation has run.
	 * @return whether the registry is initialized
	 */
	public boolean isInitialized() {
		return this.initialized;
	}

	private MethodRateLimits build(Method method, Class<?> userClass, List<RateLimited> annotations) {
		String[] names = parameterNamesOf(method);
		String where = "@RateLimited on " + describe(userClass, method);
		List<MethodPolicy> policies = new ArrayList<>();
		Set<String> namesOnMethod = new LinkedHashSet<>();
		for (RateLimited annotation : annotations) {
			String name = StringUtils.hasText(annotation.name()) ? annotation.name().trim()
					: userClass.getSimpleName() + "." + method.getName();
			if (!namesOnMethod.add(name)) {
				throw new InvalidRateLimitPolicyException(name, where + ": policy '" + name
						+ "' is declared more than once on this method; give each @RateLimited a distinct name");
			}
			MethodPolicy policy = build(annotation, name, where, names, method.getParameterTypes(),
					this.overrides.getOrDefault(name, PolicyOverride.NONE), PROPERTY_PREFIX + "." + bracketed(name));
			declare(name, where, (policy != null) ? policy.policy() : null, StringUtils.hasText(annotation.name()));
			if (policy != null) {
				policies.add(policy);
			}
		}
		return new MethodRateLimits(userClass, policies, names);
	}

	private @Nullable MethodPolicy build(RateLimited annotation, String name, String where, String[] parameterNames,
			Class<?>[] parameterTypes, PolicyOverride override, String property) {
		if (Boolean.FALSE.equals(override.enabled())) {
			return null;
		}
		Long limit = (override.limit() != null) ? override.limit()
				: (annotation.limit() != RateLimited.UNSET) ? Long.valueOf(annotation.limit()) : null;
		if (limit == null) {
			throw invalid(name, where, "'limit' is not set; set it on the annotation or with '" + property + ".limit'");
		}
		Duration window = (override.window() != null) ? override.window() : parseWindow(annotation.window(), name,
				where, property);
		Algorithm algorithm = (override.algorithm() != null) ? override.algorithm() : annotation.algorithm();
		Long burst = (override.burst() != null) ? override.burst()
				: (annotation.burst() != RateLimited.UNSET) ? Long.valueOf(annotation.burst()) : null;
		FailureMode failureMode = (override.failureMode() != null) ? override.failureMode() : this.defaultFailureMode;
		PolicyMode mode = (override.mode() != null) ? override.mode() : annotation.mode();
		RateLimitPolicy policy;
		try {
			policy = RateLimitPolicy.builder(name)
				.algorithm(algorithm)
				.limit(limit)
				.window(window)
				.burst(burst)
				.failureMode(failureMode)
				.mode(mode)
				.build();
			this.storeCheck.accept(policy);
		}
		catch (IllegalArgumentException ex) {
			String message = String.valueOf(ex.getMessage());
			throw invalid(name, where, message + source(message, override, property), ex);
		}
		String keyExpression = ((override.key() != null) ? override.key() : annotation.key()).trim();
		KeySource key = keySource(keyExpression, name, where, parameterNames, parameterTypes);
		CostSource cost = costSource(annotation.cost().trim(), policy, where, override, property);
		CountOn countOn;
		try {
			countOn = CountOn.of((override.countOn() != null) ? override.countOn() : List.of(annotation.countOn()));
		}
		catch (IllegalArgumentException ex) {
			throw invalid(name, where, ex.getMessage() + ((override.countOn() != null) ? " (from " + property
					+ ".count-on)" : ""));
		}
		String skip = ((override.skip() != null) ? override.skip() : annotation.skip()).trim();
		Expression skipExpression = skip.isEmpty() ? null : parse(skip, "skip", name, where);
		String declaration = declarationOf(where);
		return new MethodPolicy(policy, declaration, keyExpression, key, cost, countOn, skipExpression,
				planned(policy, where));
	}

	/** The policy as each plan that changes it has it, checked like the policy itself. */
	private Map<String, RateLimitPolicy> planned(RateLimitPolicy policy, String where) {
		Map<String, RateLimitPolicy> planned = new LinkedHashMap<>();
		this.plans.forEach((plan, overrides) -> {
			PlanOverride override = overrides.get(policy.name());
			if (override == null) {
				return;
			}
			String property = "ratelimit.plans." + plan + "." + bracketed(policy.name());
			try {
				RateLimitPolicy variant = policy.toBuilder()
					.variant(plan)
					.limit((override.limit() != null) ? override.limit() : policy.limit())
					.window((override.window() != null) ? override.window() : policy.window())
					.burst((override.burst() != null) ? override.burst()
							: (policy.burst() != policy.limit() || override.limit() == null) ? policy.burst() : null)
					.build();
				this.storeCheck.accept(variant);
				planned.put(plan, variant);
				synchronized (this.declared) {
					this.planned.computeIfAbsent(policy.name(), (name) -> new LinkedHashMap<>()).put(plan, variant);
				}
			}
			catch (IllegalArgumentException ex) {
				throw invalid(policy.name(), where, ex.getMessage() + " (from " + property + ")", ex);
			}
		});
		return planned;
	}

	private static String bracketed(String name) {
		return name.contains(".") ? "[" + name + "]" : name;
	}

	/**
	 * Set the plans: by plan name, by policy name, what the plan changes; and the plan of requests with no plan or an
	 * unknown one. Set before start-up validation.
	 * @param plans the plans
	 * @param defaultPlan the default plan, or {@code null} for the policies as declared
	 * @throws InvalidRateLimitPolicyException if the default plan is not one of the plans
	 */
	public void setPlans(Map<String, Map<String, PlanOverride>> plans, @Nullable String defaultPlan) {
		// In configuration order: the endpoint lists them so.
		Map<String, Map<String, PlanOverride>> ordered = new LinkedHashMap<>();
		plans.forEach((plan, policies) -> ordered.put(plan, Collections.unmodifiableMap(new LinkedHashMap<>(policies))));
		this.plans = Collections.unmodifiableMap(ordered);
		if (defaultPlan != null && !plans.containsKey(defaultPlan)) {
			throw new InvalidRateLimitPolicyException(defaultPlan, "ratelimit.default-plan '" + defaultPlan
					+ "' is not a plan under ratelimit.plans. Known plans: "
					+ (plans.isEmpty() ? "none" : String.join(", ", new TreeSet<>(plans.keySet()))) + ".");
		}
		this.defaultPlan = defaultPlan;
	}

	/**
	 * Return the plan a request with the given plan (from the plan resolver) is decided under: the plan if it is
	 * known, else the default plan.
	 * @param plan the plan, or {@code null}
	 * @return the plan to apply, or {@code null} for the policies as declared
	 */
	/**
	 * Name the shared policies that disabled filters draw, so that switching a filter off
	 * ({@code ratelimit.filters.<name>.enabled=false}) does not fail start-up for the policies it drew.
	 * @param names the policy names
	 */
	public void setDrawnByDisabledFilters(Set<String> names) {
		this.drawnByDisabledFilters = Set.copyOf(names);
	}

	@Nullable String effectivePlan(@Nullable String plan) {
		return (plan != null && this.plans.containsKey(plan)) ? plan : this.defaultPlan;
	}

	boolean hasPlans() {
		return !this.plans.isEmpty();
	}

	/**
	 * Build a policy defined in configuration, outside any annotation: a filter's, or a shared policy drawn by a
	 * filter. Declared like an annotation's, so that its name is known and its settings are checked against other
	 * declarations of the name.
	 * @param attributes the policy's attributes, as an annotation would give them
	 * @param where where it is configured, for messages (such as {@code ratelimit.filters.edge})
	 * @param override configured values over the attributes
	 * @return the policy, or {@code null} if it is disabled
	 */
	@Nullable MethodPolicy buildConfigured(RateLimited attributes, String where, PolicyOverride override) {
		String name = attributes.name();
		MethodPolicy policy = build(attributes, name, where, new String[0], new Class<?>[0], override, where);
		declare(name, where, (policy != null) ? policy.policy() : null, true);
		return policy;
	}

	/**
	 * Return the shared policy of the given name, defined in {@code ratelimit.policies.<name>}, for a filter that
	 * draws from it.
	 * @param name the policy's name
	 * @param where who draws it, for messages
	 * @return the policy, or {@code null} if it is disabled
	 * @throws InvalidRateLimitPolicyException if no such policy is configured in full
	 */
	@Nullable MethodPolicy sharedPolicy(String name, String where) {
		PolicyOverride override = this.overrides.get(name);
		if (override == null || override.limit() == null || override.window() == null) {
			throw new InvalidRateLimitPolicyException(name, where + " names policy '" + name + "', which is not "
					+ "defined under ratelimit.policies (a shared policy needs at least its limit and window there)");
		}
		RateLimited attributes = MergedAnnotation.of(RateLimited.class, Map.of("name", name)).synthesize();
		return buildConfigured(attributes, PROPERTY_PREFIX + "." + bracketed(name), override);
	}

	private static String source(String message, PolicyOverride override, String property) {
		if (message.startsWith("'limit'") && override.limit() != null) {
			return " (from " + property + ".limit)";
		}
		if (message.startsWith("'window'") && override.window() != null) {
			return " (from " + property + ".window)";
		}
		if (message.startsWith("'burst'") && override.burst() != null) {
			return " (from " + property + ".burst)";
		}
		return "";
	}

	private static Duration parseWindow(String window, String name, String where, String property) {
		String text = window.trim();
		if (text.isEmpty()) {
			throw invalid(name, where,
					"'window' is not set; set it on the annotation or with '" + property + ".window'");
		}
		if (text.chars().allMatch(Character::isDigit)) {
			throw invalid(name, where, "'window' must have a unit (ms, s, m, h, d) or be ISO-8601 (PT1M) but was '"
					+ text + "'");
		}
		try {
			return DurationStyle.detectAndParse(text);
		}
		catch (RuntimeException ex) {
			throw invalid(name, where,
					"'window' must be a duration such as 500ms, 30s, 1m, 1h, 1d or PT1M but was '" + text + "'", ex);
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
		return new KeySource.Spel(parse(expression, "key", name, where));
	}

	private CostSource costSource(String cost, RateLimitPolicy policy, String where, PolicyOverride override,
			String property) {
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
				boolean configured = policy.algorithm().isBucket() ? (override.burst() != null || override.limit() != null)
						: override.limit() != null;
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

	/** The method of an annotation's declaration, or the property of a configured one. */
	private static String declarationOf(String where) {
		return where.startsWith("@RateLimited on ") ? where.substring("@RateLimited on ".length()) : where;
	}

	private void declare(String name, String where, @Nullable RateLimitPolicy policy, boolean named) {
		synchronized (this.declared) {
			String method = declarationOf(where);
			List<String> methods = this.declaredBy.computeIfAbsent(name, (key) -> new ArrayList<>());
			if (!methods.contains(method)) {
				methods.add(method);
			}
			Declaration existing = this.declared.get(name);
			if (existing == null) {
				this.declared.put(name, new Declaration(where, policy));
				return;
			}
			if (!named && !existing.where().equals(where)) {
				logger.warn(where + " shares the default policy name '" + name + "' (and so its counters) with "
						+ declarationOf(existing.where())
						+ "; give each a name if they should be counted apart");
			}
			if (existing.policy() != null && policy != null && !existing.policy().equals(policy)) {
				throw new InvalidRateLimitPolicyException(name, where + ": policy '" + name
						+ "' is also declared by " + declarationOf(existing.where())
						+ " with different settings (" + existing.policy().describe() + " there, " + policy.describe()
						+ " here); methods that share a policy name share its counters and must declare the same "
						+ "limit, window, algorithm and burst");
			}
		}
	}

	private void checkConfiguredPoliciesExist() {
		Set<String> known;
		synchronized (this.declared) {
			known = new TreeSet<>(this.declared.keySet());
		}
		for (Map.Entry<String, PolicyOverride> entry : this.overrides.entrySet()) {
			if (this.drawnByDisabledFilters.contains(entry.getKey())) {
				continue;
			}
			String name = entry.getKey();
			PolicyOverride override = entry.getValue();
			if (!known.contains(name)) {
				String property = PROPERTY_PREFIX + "." + (name.contains(".") ? "[" + name + "]" : name);
				boolean shared = override.limit() != null && override.window() != null;
				throw new InvalidRateLimitPolicyException(name, property
						+ " does not match any @RateLimited policy. Known policies: "
						+ (known.isEmpty() ? "none" : String.join(", ", known)) + "."
						+ (shared ? " A shared policy is drawn by @RateLimited(name = \"" + name
								+ "\") or a filter's 'policies'; this one is drawn by none." : ""));
			}
		}
	}

	private String[] parameterNamesOf(Method method) {
		String[] names = this.parameterNames.getParameterNames(method);
		if (names == null) {
			names = new String[method.getParameterCount()];
			for (int i = 0; i < names.length; i++) {
				names[i] = "p" + i;
			}
		}
		return names;
	}

	BeanResolver beanResolver() {
		return this.beanResolver;
	}

	static String describe(Class<?> type, Method method) {
		return type.getSimpleName() + "#" + method.getName() + Arrays.stream(method.getParameterTypes())
			.map(Class::getSimpleName)
			.collect(Collectors.joining(", ", "(", ")"));
	}

	private static InvalidRateLimitPolicyException invalid(String name, String where, String problem) {
		return new InvalidRateLimitPolicyException(name, where + ": " + problem);
	}

	private static InvalidRateLimitPolicyException invalid(String name, String where, String problem,
			Throwable cause) {
		return new InvalidRateLimitPolicyException(name, where + ": " + problem, cause);
	}

	/**
	 * Return every declared policy that is enabled, with where it is declared and where its values came from.
	 * @return the policies, in the order they were declared
	 */
	public List<DeclaredPolicy> declaredPolicies() {
		List<DeclaredPolicy> policies = new ArrayList<>();
		synchronized (this.declared) {
			this.declared.forEach((name, declaration) -> {
				if (declaration.policy() != null) {
					policies.add(describe(name, declaration.policy()));
				}
			});
		}
		return policies;
	}

	/**
	 * Return one declared, enabled policy.
	 * @param name the policy's name
	 * @return the policy, or {@code null} if there is none of that name
	 */
	public @Nullable DeclaredPolicy declaredPolicy(String name) {
		synchronized (this.declared) {
			Declaration declaration = this.declared.get(name);
			return (declaration != null && declaration.policy() != null) ? describe(name, declaration.policy()) : null;
		}
	}

	private DeclaredPolicy describe(String name, RateLimitPolicy policy) {
		List<String> declaredBy = this.declaredBy.getOrDefault(name, List.of());
		Map<String, String> sources = new LinkedHashMap<>();
		String filter = declaredBy.stream().filter((where) -> where.startsWith("ratelimit.filters.")).findFirst()
			.orElse(null);
		if (filter != null) {
			// A filter's values all come from its own properties.
			for (String attribute : policy.algorithm().isBucket() ? List.of("algorithm", "limit", "window", "burst")
					: List.of("algorithm", "limit", "window")) {
				sources.put(attribute, filter + "." + attribute);
			}
			sources.put("failure-mode", filter + ".failure-mode");
			sources.put("mode", filter + ".mode");
		}
		else {
			PolicyOverride override = this.overrides.getOrDefault(name, PolicyOverride.NONE);
			String property = PROPERTY_PREFIX + "." + bracketed(name);
			sources.put("algorithm", (override.algorithm() != null) ? property + ".algorithm" : "annotation");
			sources.put("limit", (override.limit() != null) ? property + ".limit" : "annotation");
			sources.put("window", (override.window() != null) ? property + ".window" : "annotation");
			if (policy.algorithm().isBucket()) {
				sources.put("burst", (override.burst() != null) ? property + ".burst" : "annotation");
			}
			sources.put("failure-mode",
					(override.failureMode() != null) ? property + ".failure-mode" : "ratelimit.failure-mode");
			sources.put("mode", (override.mode() != null) ? property + ".mode" : "annotation");
		}
		Map<String, RateLimitPolicy> plans = new LinkedHashMap<>();
		synchronized (this.declared) {
			plans.putAll(this.planned.getOrDefault(name, Map.of()));
		}
		Map<String, Map<String, String>> planSources = new LinkedHashMap<>();
		plans.forEach((plan, variant) -> planSources.put(plan, planSources(plan, name, variant)));
		return new DeclaredPolicy(policy, List.copyOf(declaredBy), Collections.unmodifiableMap(sources),
				Collections.unmodifiableMap(plans), Collections.unmodifiableMap(planSources));
	}

	/** By attribute, where a plan's variant has its value: the plan's property, or the policy as declared. */
	private Map<String, String> planSources(String plan, String name, RateLimitPolicy variant) {
		PlanOverride override = this.plans.getOrDefault(plan, Map.of()).get(name);
		String property = "ratelimit.plans." + plan + "." + bracketed(name);
		Map<String, String> sources = new LinkedHashMap<>();
		sources.put("limit", (override != null && override.limit() != null) ? property + ".limit" : "policy");
		sources.put("window", (override != null && override.window() != null) ? property + ".window" : "policy");
		if (variant.algorithm().isBucket()) {
			sources.put("burst", (override != null && override.burst() != null) ? property + ".burst" : "policy");
		}
		return Collections.unmodifiableMap(sources);
	}

	/**
	 * A declared policy: its effective configuration, the methods that declare it, and by attribute where its value
	 * came from ({@code annotation}, or the property that set it).
	 * @param policy the policy
	 * @param declaredBy the methods that declare it
	 * @param sources by attribute, the source of its value
	 * @param plans by plan ({@code ratelimit.plans.<plan>}), the policy as that plan changes it
	 * @param planSources by plan, by attribute, the source of the variant's value: the plan's property, or
	 * {@code policy} for a value the variant keeps from the policy
	 */
	public record DeclaredPolicy(RateLimitPolicy policy, List<String> declaredBy, Map<String, String> sources,
			Map<String, RateLimitPolicy> plans, Map<String, Map<String, String>> planSources) {
	}

	private record Declaration(String where, @Nullable RateLimitPolicy policy) {
	}

}
