package io.github.ratelimit.engine;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.annotation.RateLimited;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.MethodClassKey;
import org.springframework.core.MethodIntrospector;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

/**
 * The policies of every {@code @RateLimited} method, parsed when its class is registered (the beans' classes at
 * start-up, a lazy bean's when it is created) and found by a map lookup on each call. A call on a class never
 * registered finds none: no request parses annotations.
 */
final class MethodPolicies {

	private static final Log logger = LogFactory.getLog(PolicyCatalog.class);

	private final PolicyParser parser;

	/** {@code ratelimit.policies.<name>}, by name. */
	private final Map<String, PolicyValues> configured;

	private final PolicyDeclarations declarations;

	private final DefaultParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();

	/** The policies of each scanned method, by the method and the class it is invoked on. */
	private final ConcurrentHashMap<MethodClassKey, MethodLimits> byMethod = new ConcurrentHashMap<>();

	/**
	 * The same, by the {@link Method} instances proxies invoke (an interface's, a superclass's): found once from the
	 * method of the class, then in one lookup.
	 */
	private final ConcurrentHashMap<Method, MethodLimits> byInvokedMethod = new ConcurrentHashMap<>();

	private final Set<Class<?>> scanned = ConcurrentHashMap.newKeySet();

	/** Classes called on that were never registered, warned of once each. */
	private final Set<Class<?>> unregistered = ConcurrentHashMap.newKeySet();

	MethodPolicies(PolicyParser parser, Map<String, PolicyValues> configured, PolicyDeclarations declarations) {
		this.parser = parser;
		this.configured = configured;
		this.declarations = declarations;
	}

	/** Find and check the rate limited methods of a class, once per class. */
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
		methods.forEach((method, annotations) -> this.byMethod.putIfAbsent(new MethodClassKey(method, userClass),
				methodLimits(method, userClass, annotations)));
	}

	/** The policies of a method invoked on an instance of the given class, or {@code null} if it has none. */
	@Nullable MethodLimits lookup(Method method, Class<?> targetClass) {
		MethodLimits limits = this.byInvokedMethod.get(method);
		if (limits != null && limits.targetClass == targetClass) {
			return limits;
		}
		Class<?> userClass = ClassUtils.getUserClass(targetClass);
		MethodClassKey key = new MethodClassKey(ClassUtils.getMostSpecificMethod(method, userClass), userClass);
		limits = this.byMethod.get(key);
		if (limits == null && !this.scanned.contains(userClass) && this.unregistered.size() < 1024
				&& this.unregistered.add(userClass)) {
			logger.warn("@RateLimited methods of " + userClass.getName() + " are called on an instance that no "
					+ "application context registered (a proxy built by hand): its limits are not applied. Make it a "
					+ "bean, or register the class with PolicyCatalog.register at start-up.");
		}
		if (limits == null) {
			return null;
		}
		if (userClass == targetClass && this.byInvokedMethod.size() < 4 * this.byMethod.size()) {
			this.byInvokedMethod.put(method, limits);
		}
		return limits;
	}

	private MethodLimits methodLimits(Method method, Class<?> userClass, List<RateLimited> annotations) {
		String[] names = parameterNamesOf(method);
		String where = "@RateLimited on " + RateLimitedMethods.describe(userClass, method);
		List<PolicySpec> specs = new ArrayList<>();
		Set<String> namesOnMethod = new LinkedHashSet<>();
		for (RateLimited annotation : annotations) {
			boolean named = StringUtils.hasText(annotation.name());
			String name = named ? annotation.name().trim() : userClass.getSimpleName() + "." + method.getName();
			if (!namesOnMethod.add(name)) {
				throw new InvalidRateLimitPolicyException(name, where + ": policy '" + name
						+ "' is declared more than once on this method; give each @RateLimited a distinct name");
			}
			String property = PolicyCatalog.POLICIES + "." + PolicyParser.bracketed(name);
			PolicySpec spec = this.parser.parse(name, where, property,
					List.of(this.configured.getOrDefault(name, PolicyValues.NONE), PolicyValues.of(annotation)), names,
					method.getParameterTypes());
			this.declarations.declare(name, where, spec, named);
			if (spec != null) {
				specs.add(spec);
			}
		}
		return new MethodLimits(userClass, specs, names);
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

}
